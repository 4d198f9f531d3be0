package session

import (
	"encoding/json"
	"fmt"
)

// KindRewind is the kind of the record [Log.Rewind] appends. Its data is
// {"to":N}: the records after sequence number N and before the rewind
// record itself are no longer part of the session ([Live] drops them).
// The log stays append-only, so a rewind is as crash-safe as any record.
const KindRewind = "rewind"

type rewindData struct {
	To int64 `json:"to"`
}

// Rewind appends a record that drops the records after sequence number to
// (0: every record before this one) from the session's live records, and
// syncs the log.
func (l *Log) Rewind(to int64) (Record, error) {
	if to < 0 {
		return Record{}, fmt.Errorf("session %s: rewind to %d", l.id, to)
	}
	rec, err := l.Append(KindRewind, rewindData{To: to})
	if err != nil {
		return Record{}, err
	}
	return rec, l.Sync()
}

// Live returns the records of recs (a whole log, in order) that the rewinds
// among them left in the session: without the records each rewind dropped
// and without the rewind records. A rewind record that was itself dropped
// by a later one has no effect of its own beyond that later one's.
func Live(recs []Record) []Record {
	var spans []span
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Kind != KindRewind || dropped(spans, r.Seq) {
			continue
		}
		var d rewindData
		if json.Unmarshal(r.Data, &d) != nil || d.To < 0 {
			continue
		}
		spans = append(spans, span{d.To, r.Seq})
	}
	if len(spans) == 0 {
		return recs
	}
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		if r.Kind == KindRewind || dropped(spans, r.Seq) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// span is the records a rewind dropped: from < seq < to.
type span struct{ from, to int64 }

func dropped(spans []span, seq int64) bool {
	for _, s := range spans {
		if s.from < seq && seq < s.to {
			return true
		}
	}
	return false
}
