# benchtable.awk turns the BenchmarkTable* and BenchmarkLoad10k lines of
# `go test -bench` output into the performance table (make bench): one row
# per benchmark with acpd, its floor and their ratio.
function metric(name,   i) {
	for (i = 4; i < NF; i++) if ($(i+1) == name) return $i
	return ""
}
BEGIN {
	label["TableSpawnEmpty"]   = "spawn → initialize, empty store (floor: same-deps responder)"
	label["TableSpawn10k"]     = "spawn → initialize, 10,000 sessions (floor: empty store)"
	label["TableSessionNew1k"] = "session/new, 1,000 sessions (floor: empty store)"
	label["TableSessionNew10k"]= "session/new, 10,000 sessions (floor: empty store)"
	label["TableSessionNewDurable"] = "session/new, median (floor: the durable work in Go, median)"
	label["TableIdleRSS"]      = "idle RSS after initialize + session/new (anonymous + file pages)"
	label["TableList1k"]       = "session/list, 1,000 sessions (floor: read + parse index.json)"
	label["TableStream100k"]   = "100,000 deltas, local OpenAI SSE server → client (floor: bare SSE client)"
	label["TableLoad10k"]      = "session/load, 10,000 records, through acpd (floor: read + parse + notify, Node)"
	label["TableLoadLong500"]  = "session/load, the 500-turn session of the long row (floor: read + parse + notify, Node)"
	label["Load10k"]           = "session/load, 10,000 records with replay (floor: read + parse each line)"
	label["TableIdle100"]      = "idle sessions (100)"
	label["TablePeakRSS32M"]   = "peak RSS, 32 MiB answer beside a streaming session (floor: the goal, 2× the answer + 30 MB)"
	label["TableMCPToolsReady3"] = "MCP tools ready, 3 stdio servers (floor: bare initialize + tools/list)"
	label["TableMCPCall"]      = "MCP tool call round trip, stdio (floor: MCP TypeScript client, direct)"
	label["TableSessions50"]   = "50 sessions × 10,000 deltas at once, one acpd, wall (floor: 50 bare SSE clients)"
	label["TableLong500"]      = "prompt → first model byte, turns 491–500 with tool calls (floor: turns 2–10)"
	label["TableMCP20"]        = "MCP tools ready, 20 stdio servers in one session (floor: the slowest one's bare handshake)"
	printf "| %-72s | %14s | %14s | %7s |\n", "figure", "acpd", "floor", "ratio"
	printf "|%s|%s|%s|%s|\n", "--------------------------------------------------------------------------", "----------------", "----------------", "---------"
}
/^Benchmark/ {
	name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	if (!(name in label)) next
	if (name == "TableIdle100") {
		printf "| %-72s | %6s KiB each | %14s | %7s |\n", label[name], metric("KiB/session"), "≤ 64 KiB", ""
		printf "| %-72s | %14s | %14s | %7s |\n", "inotify instances after 100 idle sessions", metric("inotify"), "≤ 2", ""
		next
	}
	if (name == "TableIdleRSS") {
		printf "| %-72s | %11s MB | %8s MB goal | %7.2f |\n", label[name], metric("rss-MB"), "< 15", metric("rss-MB") / 15
		printf "| %-72s | %11s MB | %14s | %7s |\n", "  of which anonymous (heap, stacks, runtime)", metric("anon-MB"), "", ""
		printf "| %-72s | %11s MB | %14s | %7s |\n", "  of which file pages (the mapped binary)", metric("file-MB"), "", ""
		printf "| %-72s | %11s MB | %14s | %7s |\n", "    text / rodata+pclntab / data resident", metric("text-MB") " / " metric("rodata-MB") " / " metric("data-MB"), "", ""
		next
	}
	if (name == "TablePeakRSS32M") {
		# The floor column is the goal: twice the answer plus 30 MB.
		a = metric("peak-MiB"); g = 2 * metric("answer-MiB") + 30e6 / 1048576
		printf "| %-72s | %10s MiB | %6.1f MiB goal | %7.2f |\n", label[name], a, g, a / g
		a = metric("next-peak-MiB")
		printf "| %-72s | %10s MiB | %6.1f MiB goal | %7.2f |\n", "peak RSS, the next model request (the answer in its body) beside a streaming session", a, g, a / g
		next
	}
	if (name == "TableMCP20") {
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", label[name], metric("acpd-ms"), metric("floor-ms"), metric("ratio")
		printf "| %-72s | %11s µs | %11s µs | %7.2f |\n", "MCP tool call round trip, 20 servers, model → tool → model (floor: tools/call, direct)", metric("call-acpd-µs"), metric("call-floor-µs"), metric("call-acpd-µs") / metric("call-floor-µs")
		printf "| %-72s | %11s µs | %14s | %7s |\n", "time acpd adds per MCP tool call, 20 servers", metric("added-µs"), "goal < 1000 µs", ""
		next
	}
	if (name == "TableLong500") {
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", label[name], metric("late-ms"), metric("early-ms"), metric("ratio-avg")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  turn 500 against turn 1 as such (turn 1 includes the first connection)", metric("t500-ms"), metric("t1-ms"), metric("ratio")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  prompt → request body read in full, turn 500 (floor: turn 1)", metric("t500-body-ms"), metric("t1-body-ms"), metric("t500-body-ms") / metric("t1-body-ms")
		printf "| %-72s | %10s KiB | %10s KiB | %7.2f |\n", "  request body, turn 500 (floor: turn 1)", metric("t500-KiB"), metric("t1-KiB"), metric("t500-KiB") / metric("t1-KiB")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  acpd CPU per turn, turns 451–500 (floor: turns 2–51)", metric("cpu-late-ms/turn"), metric("cpu-early-ms/turn"), metric("cpu-late-ms/turn") / metric("cpu-early-ms/turn")
		next
	}
	if (name == "TableSessions50") {
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", label[name], metric("acpd-ms"), metric("floor-ms"), metric("ratio")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  CPU time (acpd's process; floor: the test process's, bare clients only)", metric("cpu-acpd-ms"), metric("cpu-floor-ms"), metric("cpu-ratio")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  slowest first chunk of the 50, server flush → client (floor: → bare client)", metric("first-acpd-ms"), metric("first-floor-ms"), metric("first-acpd-ms") / metric("first-floor-ms")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  first chunk of a 51st session while the 50 stream (goal ≤ 10 ms)", metric("late-acpd-ms"), metric("late-floor-ms"), metric("late-acpd-ms") / metric("late-floor-ms")
		printf "| %-72s | %6s KiB each | %14s | %7s |\n", "  RSS per idle session (50 session/new)", metric("KiB/session"), "≤ 64 KiB", ""
		printf "| %-72s | %10s MiB | %6.1f MiB goal | %7.2f |\n", "  peak RSS (goal: RSS before + 64 KiB and the answer per session)", metric("peak-MiB"), metric("goal-MiB"), metric("peak-MiB") / metric("goal-MiB")
		next
	}
	if (name == "TableLoad10k" || name == "TableLoadLong500") {
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", label[name], metric("acpd-ms"), metric("node-ms"), metric("ratio-node")
		printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  the same, floor in Go (a child process, encoding/json per line)", metric("acpd-ms"), metric("go-ms"), metric("ratio-go")
		if (metric("cpu-go-ms") > 0)
			printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", "  CPU time per load, acpd's process (floor: the Go floor's)", metric("cpu-acpd-ms"), metric("cpu-go-ms"), metric("cpu-acpd-ms") / metric("cpu-go-ms")
		next
	}
	if (name == "Load10k") {
		printf "| %-72s | %11.1f ms | %11.1f ms | %7.2f |\n", label[name], metric("acpd-ns/op") / 1e6, metric("floor-ns/op") / 1e6, metric("ratio")
		next
	}
	printf "| %-72s | %11s ms | %11s ms | %7.2f |\n", label[name], metric("acpd-ms"), metric("floor-ms"), metric("ratio")
	if (name == "TableMCPCall")
		printf "| %-72s | %11s µs | %14s | %7s |\n", "time acpd adds per MCP tool call", metric("added-µs"), "goal < 1000 µs", ""
	if (name == "TableStream100k")
		printf "| %-72s | %14s | %14s | %7s |\n", "session log bytes per byte of streamed text", metric("log/text"), "≤ 4", ""
}
