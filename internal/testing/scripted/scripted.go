// Package scripted is a stand-in for a model provider: a real HTTP server
// (run it on loopback) that answers OpenAI-shaped chat completions, plain
// or as SSE streams, from a script. No model runs in this repository, so
// the gateway's tests, load test and demo run against it
// (docs/gateway.md); it is the one stand-in they use.
package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Request is what the script sees of a completion request.
type Request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []Message `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	// Authorization is the header the upstream received.
	Authorization string `json:"-"`
}

// Message is one message of the conversation.
type Message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Text is a message's content as text ("" when it is not a string).
func (m Message) Text() string {
	s, _ := m.Content.(string)
	return s
}

// ToolCall is a function call the model asks for.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Reply is one scripted answer.
type Reply struct {
	// Status, when not 0 or 200, answers with it and Body (an error).
	Status int
	Header http.Header
	// Body is the whole JSON body of an error or of a non-streamed answer
	// built by hand; empty builds one from Content or ToolCalls.
	Body string
	// Content is the answer's text; a streamed answer sends Chunks pieces
	// of it (default: split in pieces of ChunkSize bytes, 16 when 0).
	Content   string
	Chunks    []string
	ChunkSize int
	// Piece, when set, makes a stream of Count pieces, each made when it
	// is sent (a long answer that nobody holds whole).
	Piece func(i int) string
	Count int
	// ToolCalls, when set, is the answer instead of Content.
	ToolCalls []ToolCall
	// Gap is slept before each chunk of a stream.
	Gap time.Duration
	// Hang waits before answering at all, until the request ends.
	Hang bool
	// ResetAfter, when positive, cuts the connection (a TCP reset) after
	// that many chunks of a stream.
	ResetAfter int
}

// Script chooses the reply to a request.
type Script func(Request) Reply

// Server is a running scripted upstream.
type Server struct {
	URL    string // base URL, ending in /v1
	srv    *http.Server
	ln     net.Listener
	script Script
	calls  atomic.Int64
	active atomic.Int64
	mu     sync.Mutex
	last   Request
	done   sync.WaitGroup
}

// Start runs a scripted upstream on a free loopback port.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", ln: ln, script: script}
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/chat/completions", s.chat)
	// A generous header timeout: under a load test on a busy 2-core
	// machine, 200 connections can wait seconds to be read, and a close
	// there reaches the gateway as an EOF, which is not what such a test is
	// about. The rig runs on loopback only and every test stops it.
	s.srv = &http.Server{Handler: m, ReadHeaderTimeout: time.Minute}
	s.done.Add(1)
	go func() { defer s.done.Done(); _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server and ends every request it is answering.
func (s *Server) Close() {
	_ = s.srv.Close()
	s.done.Wait()
}

// Calls is the number of completion requests received.
func (s *Server) Calls() int64 { return s.calls.Load() }

// Last is the last request received.
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Active is the number of completion requests being answered now.
func (s *Server) Active() int64 { return s.active.Load() }

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	s.active.Add(1)
	defer s.active.Add(-1)
	var req Request
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}`, 400)
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	s.mu.Lock()
	s.last = req
	s.mu.Unlock()
	rep := s.script(req)
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	for k, vs := range rep.Header {
		w.Header()[k] = vs
	}
	if rep.Status != 0 && rep.Status != 200 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		if rep.Body != "" {
			_, _ = io.WriteString(w, rep.Body)
			return
		}
		_ = json.NewEncoder(w).Encode(Completion(req.Model, rep))
		return
	}
	s.stream(w, r, req, rep)
}

// Completion is the non-streamed answer body for rep.
func Completion(model string, rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": rep.ToolCalls}
		finish = "tool_calls"
	}
	return map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
}

// Pieces splits content the way a stream of rep sends it.
func Pieces(rep Reply) []string {
	if rep.Chunks != nil {
		return rep.Chunks
	}
	n := rep.ChunkSize
	if n <= 0 {
		n = 16
	}
	var out []string
	for c := rep.Content; c != ""; {
		k := min(n, len(c))
		out = append(out, c[:k])
		c = c[k:]
	}
	return out
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl := http.NewResponseController(w)
	event := func(delta map[string]any, finish any) bool {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1700000000,
			"model": req.Model, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return fl.Flush() == nil
	}
	if !event(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	pieces := Pieces(rep)
	n := len(pieces)
	if rep.Piece != nil {
		n = rep.Count
	}
	for i := range n {
		if rep.ResetAfter > 0 && i == rep.ResetAfter {
			reset(w)
			return
		}
		if rep.Gap > 0 {
			select {
			case <-time.After(rep.Gap):
			case <-r.Context().Done():
				return
			}
		}
		var p string
		if rep.Piece != nil {
			p = rep.Piece(i) // made now, after the gap
		} else {
			p = pieces[i]
		}
		if !event(map[string]any{"content": p}, nil) {
			return
		}
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		calls := make([]any, len(rep.ToolCalls))
		for i, c := range rep.ToolCalls {
			calls[i] = map[string]any{"index": i, "id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Function.Name, "arguments": c.Function.Arguments}}
		}
		if !event(map[string]any{"tool_calls": calls}, nil) {
			return
		}
		finish = "tool_calls"
	}
	if event(map[string]any{}, finish) {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
		_ = fl.Flush()
	}
}

// reset cuts the connection with a TCP RST (SO_LINGER 0), the way a
// provider's load balancer dropping a stream looks to the gateway.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
