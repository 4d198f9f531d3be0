// Command sseserver is a local OpenAI Chat Completions server for acpd's
// benchmarks (perf_scale_bench_test.go), in its own process so that its
// CPU time is neither acpd's nor the bare clients': every response streams
// -deltas text deltas ("tok0 ", "tok1 ", …). It prints its base URL on
// stdout and serves until stdin closes; once a response's first text delta
// is flushed, it prints the request's key (the digits or letters after
// "bench-key-" in its body) and the time (Unix nanoseconds), so a client
// can tell how long that delta took to reach it. The key "late" gets a
// response of one delta.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	deltas := flag.Int("deltas", 10_000, "text deltas per response")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := "-"
		if _, after, ok := bytes.Cut(body, []byte("bench-key-")); ok {
			n := 0
			for n < len(after) && (after[n] >= '0' && after[n] <= '9' || after[n] >= 'a' && after[n] <= 'z') {
				n++
			}
			key = string(after[:n])
		}
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		const pre = `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":`
		const post = `,"finish_reason":null}]}` + "\n\n"
		bw.WriteString(pre + `{"role":"assistant","content":""}` + post)
		count := *deltas
		if key == "late" {
			count = 1
		}
		for i := range count {
			bw.WriteString(pre + `{"content":"tok` + strconv.Itoa(i%10) + ` "}` + post)
			if i == 0 {
				bw.Flush()
				w.(http.Flusher).Flush()
				fmt.Printf("%s %d\n", key, time.Now().UnixNano())
			}
		}
		bw.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
		bw.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}` + "\n\n")
		bw.WriteString("data: [DONE]\n\n")
		bw.Flush()
	}))
}
