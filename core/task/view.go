package task

import (
	"context"
	"errors"
	"fmt"
)

// User is the user side of an episode under a view.
//
// Next returns the user's next message given toUser, the agent's messages to
// the user so far, in order (len(toUser) == 0 asks for the opening
// message). done reports that the user has nothing more to say: content is
// then "" and the episode's conversation is over. The users NewUser makes
// keep no state between calls (the answer depends on len(toUser) only), so
// one User serves concurrent episodes and a resumed episode continues where
// it was; they are safe for concurrent use when the Paraphrase hook is.
type User interface {
	Next(ctx context.Context, toUser []string) (content string, done bool, err error)
}

// UserOptions configure NewUser.
type UserOptions struct {
	// Paraphrase, when set, rewrites each atomic request the simulated user
	// says (e.g. with a model, for varied wording); the identity sentence
	// and the agentic brief are not passed through it. It is called once
	// per Next that returns a request; its error is returned by Next,
	// wrapped.
	Paraphrase func(ctx context.Context, request string) (string, error)
}

// ErrUnknownView is returned (wrapped) by NewUser for a view that is neither
// ViewAgentic nor ViewSimUser.
var ErrUnknownView = errors.New("task: unknown view")

// NewUser returns the user of an episode of t under view:
//
//   - ViewAgentic: the opening message is t.Brief; after the agent's first
//     message to the user, done.
//   - ViewSimUser: the opening message is t.Identity followed by the first
//     atomic request in DAG order (t.Order()); after the agent's i-th
//     message to the user (i = 1, 2, ...) the (i+1)-th request; after the
//     agent's message following the last request, done. A task without
//     atomic tasks opens with t.Brief instead, then done.
//
// Errors: a nil task, an invalid task (t.Validate), or ErrUnknownView.
func NewUser(t *Task, view string, opts UserOptions) (User, error) {
	if t == nil {
		return nil, errors.New("task: NewUser: nil task")
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	switch view {
	case ViewAgentic:
		return &agenticUser{brief: t.Brief}, nil
	case ViewSimUser:
		u := &simUser{brief: t.Brief, identity: t.Identity, paraphrase: opts.Paraphrase}
		for _, i := range t.Order() {
			u.requests = append(u.requests, t.Atomic[i].Request)
		}
		return u, nil
	}
	return nil, fmt.Errorf("%w %q (want %q or %q)", ErrUnknownView, view, ViewAgentic, ViewSimUser)
}

type agenticUser struct{ brief string }

func (u *agenticUser) Next(ctx context.Context, toUser []string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	if len(toUser) == 0 {
		return u.brief, false, nil
	}
	return "", true, nil
}

type simUser struct {
	brief, identity string
	requests        []string
	paraphrase      func(context.Context, string) (string, error)
}

func (u *simUser) Next(ctx context.Context, toUser []string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	i := len(toUser)
	if len(u.requests) == 0 {
		if i == 0 {
			return u.brief, false, nil
		}
		return "", true, nil
	}
	if i >= len(u.requests) {
		return "", true, nil
	}
	req := u.requests[i]
	if u.paraphrase != nil {
		p, err := u.paraphrase(ctx, req)
		if err != nil {
			return "", false, fmt.Errorf("task: simulated user: paraphrasing request %d: %w", i+1, err)
		}
		req = p
	}
	if i == 0 && u.identity != "" {
		req = u.identity + " " + req
	}
	return req, false, nil
}
