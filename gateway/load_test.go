package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// piece is chunk i of stream id: its content names both, so a chunk of
// another stream, a lost one or one out of order is seen.
func piece(id string, i, size int) string {
	head := id + ":" + strconv.Itoa(i) + ";"
	return head + strings.Repeat("z", max(0, size-len(head)))
}

// readStream reads an SSE completion stream chunk by chunk, handing each
// content delta to each; it returns whether [DONE] ended it.
func readStream(ctx context.Context, url, key, id string, each func(string) error) (bool, error) {
	body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"` + id + `"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := loadClient.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return false, fmt.Errorf("status %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if bytes.Equal(line, []byte("[DONE]")) {
			return true, nil
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &ch); err != nil {
			return false, err
		}
		if ch.Error != nil {
			return false, fmt.Errorf("error event %s", ch.Error)
		}
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			if err := each(ch.Choices[0].Delta.Content); err != nil {
				return false, err
			}
		}
	}
	return false, sc.Err()
}

var loadClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}

func heapInUse() uint64 {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestLoad200Streams sends 200 concurrent streamed completions of 1 MB
// each through the gateway, on loopback. Every stream must arrive whole,
// in order and unmixed, the heap must not grow by anything near the 200
// MB that buffering the answers would take, and nothing may be left
// running after. With PLING_BENCH_OUT it also writes the figures and the
// added latency per chunk, as a ratio to the upstream direct (make
// bench-gateway).
func TestLoad200Streams(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: 200 streams of 1 MB")
	}
	const streams, chunks, size = 200, 256, 4096 // 1 MiB each
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before := goruntime.NumGoroutine()
	// A low GC target keeps garbage from padding the peak, so the peak
	// follows what is live: the buffers of streams in flight, or the
	// answers, were they held.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	goruntime.GC()
	heap0 := heapInUse()
	e := start(t, func(r scripted.Request) scripted.Reply {
		id := r.Messages[0].Text()
		return scripted.Reply{Count: chunks, Piece: func(i int) string { return piece(id, i, size) }}
	}, func(c *gateway.Config) { c.UpstreamTimeout = time.Minute }) // a shared machine may be slow; this is not a timeout test
	var peak atomic.Uint64
	stopSample := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if h := heapInUse(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stopSample:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, streams)
	var inFlightSeen atomic.Int64
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "s" + strconv.Itoa(s)
			i := 0
			done, err := readStream(ctx, e.gw.URL+"/v1", siteKey, id, func(c string) error {
				if c != piece(id, i, size) {
					return fmt.Errorf("chunk %d of %s is %.40q…", i, id, c)
				}
				if i == chunks/2 {
					inFlightSeen.Add(1)
				}
				i++
				return nil
			})
			switch {
			case err != nil:
				errs[s] = err
			case !done || i != chunks:
				errs[s] = fmt.Errorf("%s ended after %d of %d chunks (done %v)", id, i, chunks, done)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopSample)
	<-sampled
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	goruntime.GC()
	heap1 := heapInUse()
	growth := int64(peak.Load()) - int64(heap0)
	t.Logf("200 streams × 1 MiB in %v; heap before %d MiB, peak %d MiB, after %d MiB", elapsed.Round(time.Millisecond),
		heap0>>20, peak.Load()>>20, heap1>>20)
	if t.Failed() {
		t.Logf("gateway log:\n%s", lastLog(e.logs.String(), 20))
	}
	if growth > 100<<20 {
		t.Errorf("heap grew by %d MiB at its peak: answers are being buffered", growth>>20)
	}
	e.gw.Close()
	e.up.Close()
	loadClient.CloseIdleConnections()
	noLeak(t, before)

	if out := os.Getenv("PLING_BENCH_OUT"); out != "" {
		ratio, direct, via := chunkLatencyRatio(t)
		b, _ := json.MarshalIndent(map[string]any{
			"date":    time.Now().UTC().Format("2006-01-02 15:04 UTC"),
			"streams": streams, "bytesPerStream": chunks * size, "seconds": elapsed.Seconds(),
			"heapBeforeMiB": heap0 >> 20, "heapPeakMiB": peak.Load() >> 20, "heapAfterMiB": heap1 >> 20,
			"chunkLatencyDirectMicros": direct.Microseconds(), "chunkLatencyGatewayMicros": via.Microseconds(),
			"chunkLatencyRatio": ratio,
		}, "", "  ")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s:\n%s", out, b)
	}
}

// chunkLatencyRatio measures how long a chunk takes from the upstream's
// write to the client's read, straight from the upstream and through the
// gateway, side by side (each chunk carries the time it was made; the
// test, the upstream and the gateway share one clock), and returns the
// ratio of the medians.
func chunkLatencyRatio(t *testing.T) (ratio float64, direct, via time.Duration) {
	base := time.Now()
	e := start(t, func(scripted.Request) scripted.Reply {
		return scripted.Reply{Count: 200, Gap: 2 * time.Millisecond,
			Piece: func(int) string { return strconv.FormatInt(int64(time.Since(base)), 10) }}
	}, nil)
	measure := func(url string) []time.Duration {
		var ds []time.Duration
		_, err := readStream(context.Background(), url, siteKey, "latency", func(c string) error {
			n, err := strconv.ParseInt(c, 10, 64)
			ds = append(ds, time.Since(base)-time.Duration(n))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	var d, g []time.Duration
	for range 5 { // interleaved, so both see the same machine
		d = append(d, measure(e.up.URL)...)
		g = append(g, measure(e.gw.URL+"/v1")...)
	}
	slices.Sort(d)
	slices.Sort(g)
	direct, via = d[len(d)/2], g[len(g)/2]
	return float64(via) / float64(direct), direct, via
}

// lastLog is the last n lines of a log that are not plain request lines.
func lastLog(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && !strings.Contains(l, `"msg":"request"`) {
			out = append(out, l)
		}
	}
	return strings.Join(out[max(0, len(out)-n):], "\n")
}
