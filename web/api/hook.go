package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/apiclient"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/hook"
	"github.com/madebook/madebook/web/httpx"
)

// handleClaudeCodeHook serves POST /hooks/claude-code (agent): a Claude
// Code http hook, answered by the logic of `madebook hook claude-code`.
// Its calls to Madebook are the command hook's REST calls, served by self
// in the process with the caller's key, so both hooks follow the same
// routes and rules. The mission is the query parameter `mission`.
func handleClaudeCodeHook(self http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		actor := httpx.Actor(c)
		if err := actor.RequireAgent("answer a Claude Code hook"); err != nil {
			return err
		}
		body, err := io.ReadAll(c.Request().Body)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return httpx.TooLarge(tooBig.Limit)
		} else if err != nil {
			return errs.E(errs.Malformed, "malformed_json", "The body could not be read: %v.", err)
		}
		if !json.Valid(body) {
			return errs.E(errs.Malformed, "malformed_json", "The body is not valid JSON: send the hook's JSON, as Claude Code does.")
		}
		in, err := hook.ParseInput(body)
		var ie *hook.InputError
		if errors.As(err, &ie) {
			return errs.E(errs.Invalid, ie.Code, "%s", ie.Msg).In(ie.Field)
		}
		mission := strings.TrimSpace(c.QueryParam("mission"))
		if mission == "" {
			return invalid("mission_required", "Name the mission in the hook's URL: /hooks/claude-code?mission=SLUG.")
		}
		req := c.Request()
		_, key, _ := strings.Cut(req.Header.Get(echo.HeaderAuthorization), " ")
		mb := hook.Client{API: &apiclient.Client{Base: "http://" + req.Host, Key: strings.TrimSpace(key),
			Transport: hook.HandlerTransport{Handler: self, RemoteAddr: req.RemoteAddr}}}
		out := hook.Handle(req.Context(), mb, hook.Config{Mission: mission}, in)
		return c.JSON(http.StatusOK, out)
	}
}
