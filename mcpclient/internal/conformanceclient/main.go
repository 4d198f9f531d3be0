// Command conformanceclient drives acpd's MCP client (package mcpclient)
// through the client scenarios of the official MCP conformance suite
// (npm package @modelcontextprotocol/conformance).
//
// The suite runs it as `conformanceclient <serverURL>` with the scenario's
// name in MCP_CONFORMANCE_SCENARIO. It connects to the URL over streamable
// HTTP with an mcpclient.Manager, does what the scenario expects, closes the
// Manager and exits 0, or prints the failure to stderr and exits 1 (2 for a
// usage error or a scenario it does not know). It never writes to stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/log"

	"acpd/mcpclient"
)

// serverName is the Server.Name the scenario's server is registered under.
const serverName = "conformance"

// timeout bounds a whole scenario run; the suite's own default is 30s.
const timeout = 20 * time.Second

// call is a tool call a scenario expects, with the text its result must
// contain.
type call struct {
	tool string
	args string
	want string
}

// scenarios maps each supported scenario to the tool calls it expects after
// connecting (which lists the tools). initialize only needs the handshake.
var scenarios = map[string][]call{
	"initialize": nil,
	"tools_call": {{tool: "add_numbers", args: `{"a":5,"b":3}`, want: "The sum of 5 and 3 is 8"}},
	"sse-retry":  {{tool: "test_reconnection", args: `{}`, want: "Reconnection test completed successfully"}},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=<name> conformanceclient <serverURL>")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	calls, ok := scenarios[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "conformanceclient: unsupported scenario %q\n", name)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := run(ctx, os.Args[1], calls)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformanceclient: scenario %s: %v\n", name, err)
		os.Exit(1)
	}
}

// run connects to url, checks that every tool in calls is listed, makes the
// calls in order and closes the Manager.
func run(ctx context.Context, url string, calls []call) (err error) {
	logger := slog.New(log.NewWithOptions(os.Stderr, log.Options{Level: log.DebugLevel}))
	m := mcpclient.NewManager(mcpclient.Options{ClientName: "acpd-conformance", ClientVersion: "1.0.0", Logger: logger})
	defer func() { err = errors.Join(err, m.Close()) }()

	if errs := m.Start(ctx, []mcpclient.Server{{Name: serverName, URL: url, Transport: mcpclient.TransportHTTP}}); len(errs) > 0 {
		return errors.Join(errs...)
	}
	tools := map[string]string{} // server's tool name -> qualified name
	for _, t := range m.Tools() {
		tools[t.Name] = t.QualifiedName
	}
	for _, c := range calls {
		q, ok := tools[c.tool]
		if !ok {
			return fmt.Errorf("tool %q not listed", c.tool)
		}
		res, err := m.Call(ctx, q, json.RawMessage(c.args))
		if err != nil {
			return fmt.Errorf("calling %s: %w", c.tool, err)
		}
		if res.IsError || !strings.Contains(res.Text, c.want) {
			return fmt.Errorf("calling %s: got result %q (isError %t), want text containing %q", c.tool, res.Text, res.IsError, c.want)
		}
	}
	return nil
}
