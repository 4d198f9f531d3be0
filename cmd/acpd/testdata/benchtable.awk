# benchtable.awk turns the BenchmarkTable* and BenchmarkLoad10k lines of
# `go test -bench` output into the performance table (make bench): one row
# per figure with acpd's value, its floor, their ratio, the goal and
# whether this run meets it.
function metric(name,   i) {
	for (i = 4; i < NF; i++) if ($(i+1) == name) return $i
	return ""
}
# row prints one row; max, when not "", is the largest value of v (a ratio
# or a figure) that meets the goal, and lt says the goal is strictly less.
function row(label, a, f, ratio, goal, v, max, lt,   met) {
	met = ""
	if (max != "") met = ((lt ? v + 0 < max + 0 : v + 0 <= max + 0) ? "yes" : "**no**")
	printf "| %-72s | %14s | %14s | %7s | %14s | %6s |\n", label, a, f, ratio, goal, met
}
function r2(x) { return sprintf("%.2f", x) }
BEGIN {
	want["TableSpawnEmpty"] = 1.2; want["TableSpawn10k"] = 1.2
	want["TableSessionNew1k"] = 1.5; want["TableSessionNew10k"] = 1.5
	want["TableSessionNewDurable"] = 2; want["TableStream100k"] = 1.5
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
	printf "| %-72s | %14s | %14s | %7s | %14s | %6s |\n", "figure", "acpd", "floor", "ratio", "goal", "met"
	printf "|%s|%s|%s|%s|%s|%s|\n", "--------------------------------------------------------------------------", "----------------", "----------------", "---------", "----------------", "--------"
}
/^Benchmark/ {
	name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	if (!(name in label)) next
	if (name == "TableIdle100") {
		row(label[name], metric("KiB/session") " KiB each", "", "", "≤ 64 KiB", metric("KiB/session"), 64)
		row("inotify instances after 100 idle sessions", metric("inotify"), "", "", "≤ 2", metric("inotify"), 2)
		next
	}
	if (name == "TableIdleRSS") {
		row(label[name], metric("rss-MB") " MB", "", r2(metric("rss-MB") / 15), "< 15 MB", metric("rss-MB"), 15, 1)
		row("  of which anonymous (heap, stacks, runtime)", metric("anon-MB") " MB", "", "", "", "", "")
		row("  of which file pages (the mapped binary)", metric("file-MB") " MB", "", "", "", "", "")
		row("    text / rodata+pclntab / data resident", metric("text-MB") " / " metric("rodata-MB") " / " metric("data-MB") " MB", "", "", "", "", "")
		next
	}
	if (name == "TablePeakRSS32M") {
		# The floor column is the goal: twice the answer plus 30 MB.
		a = metric("peak-MiB"); g = 2 * metric("answer-MiB") + 30e6 / 1048576
		row(label[name], a " MiB", sprintf("%.1f MiB", g), r2(a / g), "≤ the floor", a / g, 1)
		a = metric("next-peak-MiB")
		row("peak RSS, the next model request (the answer in its body) beside a streaming session", a " MiB", sprintf("%.1f MiB", g), r2(a / g), "≤ the floor", a / g, 1)
		next
	}
	if (name == "TableMCP20") {
		row(label[name], metric("acpd-ms") " ms", metric("floor-ms") " ms", r2(metric("ratio")), "≤ 1.2×", metric("ratio"), 1.2)
		row("  the same against the floor timed from one common start (first spawn asked → last tools)", metric("acpd-ms") " ms", metric("floor-common-ms") " ms", r2(metric("acpd-ms") / metric("floor-common-ms")), "", "", "")
		row("  CPU meanwhile: acpd's process, session/new → first request", metric("cpu-ready-ms") " ms", "", "", "", "", "")
		row("  CPU meanwhile: each server, to the first request (floor: each bare server, to its tools)", metric("cpu-server-ms") " ms", metric("cpu-floor-server-ms") " ms", r2(metric("cpu-server-ms") / metric("cpu-floor-server-ms")), "", "", "")
		row("MCP tool call round trip, 20 servers, model → tool → model (floor: tools/call, direct)", metric("call-acpd-µs") " µs", metric("call-floor-µs") " µs", r2(metric("call-acpd-µs") / metric("call-floor-µs")), "", "", "")
		row("time acpd adds per MCP tool call, 20 servers", metric("added-µs") " µs", "", "", "< 1000 µs", metric("added-µs"), 1000, 1)
		next
	}
	if (name == "TableLong500") {
		row(label[name], metric("late-ms") " ms", metric("early-ms") " ms", r2(metric("ratio-avg")), "≤ 2×", metric("ratio-avg"), 2)
		row("  turn 500 against turn 1 as such (turn 1 includes the first connection)", metric("t500-ms") " ms", metric("t1-ms") " ms", r2(metric("ratio")), "", "", "")
		row("  prompt → request body read in full, turn 500 (floor: turn 1)", metric("t500-body-ms") " ms", metric("t1-body-ms") " ms", r2(metric("t500-body-ms") / metric("t1-body-ms")), "", "", "")
		row("  request body, turn 500 (floor: turn 1)", metric("t500-KiB") " KiB", metric("t1-KiB") " KiB", r2(metric("t500-KiB") / metric("t1-KiB")), "", "", "")
		if (metric("cpu-early-ms/turn") > 0)
			row("  acpd CPU per turn, turns 451–500 (floor: turns 2–51)", metric("cpu-late-ms/turn") " ms", metric("cpu-early-ms/turn") " ms", r2(metric("cpu-late-ms/turn") / metric("cpu-early-ms/turn")), "", "", "")
		next
	}
	if (name == "TableSessions50") {
		row(label[name], metric("acpd-ms") " ms", metric("floor-ms") " ms", r2(metric("ratio")), "≤ 1.5×", metric("ratio"), 1.5)
		row("  CPU time (acpd's process; floor: the test process's, bare clients only)", metric("cpu-acpd-ms") " ms", metric("cpu-floor-ms") " ms", r2(metric("cpu-ratio")), "≤ 1.5×", metric("cpu-ratio"), 1.5)
		row("  slowest first chunk of the 50, server flush → client (floor: → bare client)", metric("first-acpd-ms") " ms", metric("first-floor-ms") " ms", r2(metric("first-acpd-ms") / metric("first-floor-ms")), "", "", "")
		row("  first chunk of a 51st session while the 50 stream (floor: → bare client)", metric("late-acpd-ms") " ms", metric("late-floor-ms") " ms", r2(metric("late-acpd-ms") / metric("late-floor-ms")), "≤ 10 ms", metric("late-acpd-ms"), 10)
		row("  RSS per idle session (50 session/new)", metric("KiB/session") " KiB each", "", "", "≤ 64 KiB", metric("KiB/session"), 64)
		row("  peak RSS (goal: RSS before + 64 KiB and the answer per session)", metric("peak-MiB") " MiB", metric("goal-MiB") " MiB", r2(metric("peak-MiB") / metric("goal-MiB")), "≤ the floor", metric("peak-MiB") / metric("goal-MiB"), 1)
		next
	}
	if (name == "TableLoad10k" || name == "TableLoadLong500") {
		row(label[name], metric("acpd-ms") " ms", metric("node-ms") " ms", r2(metric("ratio-node")), "≤ 1.5×", metric("ratio-node"), 1.5)
		row("  the same, floor in Go (a child process, encoding/json per line)", metric("acpd-ms") " ms", metric("go-ms") " ms", r2(metric("ratio-go")), "≤ 1.5×", metric("ratio-go"), 1.5)
		if (metric("cpu-go-ms") > 0)
			row("  CPU time per load, acpd's process (floor: the Go floor's)", metric("cpu-acpd-ms") " ms", metric("cpu-go-ms") " ms", r2(metric("cpu-acpd-ms") / metric("cpu-go-ms")), "", "", "")
		next
	}
	if (name == "Load10k") {
		row(label[name], sprintf("%.1f ms", metric("acpd-ns/op") / 1e6), sprintf("%.1f ms", metric("floor-ns/op") / 1e6), r2(metric("ratio")), "≤ 2×", metric("ratio"), 2)
		next
	}
	g = want[name]
	row(label[name], metric("acpd-ms") " ms", metric("floor-ms") " ms", r2(metric("ratio")), g == "" ? "" : "≤ " g "×", metric("ratio"), g)
	if (name == "TableMCPCall")
		row("time acpd adds per MCP tool call", metric("added-µs") " µs", "", "", "< 1000 µs", metric("added-µs"), 1000, 1)
	if (name == "TableStream100k")
		row("session log bytes per byte of streamed text", metric("log/text"), "", "", "≤ 4", metric("log/text"), 4)
}
