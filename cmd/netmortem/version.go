package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/internal/buildinfo"
)

func newVersionCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Long: "Prints netmortem's version, the commit it was built from and the Go toolchain that built it,\n" +
			"as --version does.",
		Example:     "  netmortem version",
		Annotations: map[string]string{exitCodesKey: exitCodesInfo},
		Args:        noArgs,
	}
	c.runs(cmd, "", func([]string) int { return runVersion(c.stdout) })
	return cmd
}

func runVersion(stdout io.Writer) int {
	fmt.Fprintln(stdout, buildinfo.Get().String())
	return exitOK
}
