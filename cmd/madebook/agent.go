package main

import (
	"context"
	"errors"

	"github.com/madebook/madebook/internal/agentcli"
)

// runAgent is `madebook agent`: the agent calls from a shell, in
// internal/agentcli.
func runAgent(ctx context.Context, c stdio, args []string) error {
	err := agentcli.Run(ctx, agentcli.IO{Getenv: c.getenv, Stdin: c.stdin, Stdout: c.stdout}, args)
	var u agentcli.UsageError
	if errors.As(err, &u) {
		return usageError{u.Msg, u.Usage}
	}
	return err
}
