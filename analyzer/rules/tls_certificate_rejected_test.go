package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestTLSCertificateRejected(t *testing.T) {
	analyzertest.Run(t, rules.TLSCertificateRejected, "testdata/tls-certificate-rejected")
}
