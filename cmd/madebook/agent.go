package main

import (
	"context"

	"github.com/madebook/madebook/internal/agentcli"
)

// runAgent is `madebook agent`: the agent calls from a shell, in
// internal/agentcli.
func runAgent(ctx context.Context, c stdio, args []string) error {
	return agentcli.Run(ctx, agentcli.IO{Getenv: c.getenv, Stdin: c.stdin, Stdout: c.stdout}, args)
}
