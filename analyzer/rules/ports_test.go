package rules

import (
	"testing"

	"github.com/netmortem/netmortem/model"
)

func TestSubtract(t *testing.T) {
	r := func(a, b uint16) model.PortRange { return model.PortRange{First: a, Last: b} }
	tests := []struct {
		in    model.PortRange
		minus []model.PortRange
		want  string
	}{
		{r(20000, 40000), nil, "20000-40000"},
		{r(20000, 40000), []model.PortRange{r(20000, 40000)}, ""},
		{r(20000, 40000), []model.PortRange{r(1, 65535)}, ""},
		{r(20000, 40000), []model.PortRange{r(25000, 26000), r(30000, 30000)}, "20000-24999,26001-29999,30001-40000"},
		{r(20000, 40000), []model.PortRange{r(10000, 20000)}, "20001-40000"},
		{r(20000, 40000), []model.PortRange{r(40000, 50000)}, "20000-39999"},
		{r(1, 65535), []model.PortRange{r(1, 1), r(65535, 65535)}, "2-65534"},
	}
	for _, tt := range tests {
		if got := rangesString(subtract(tt.in, tt.minus)); got != tt.want {
			t.Errorf("subtract(%v, %v) = %q, want %q", tt.in, tt.minus, got, tt.want)
		}
	}
}
