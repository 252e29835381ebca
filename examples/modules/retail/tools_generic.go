package main

import (
	"context"
	"errors"
	"strings"
)

type calculateIn struct {
	Expression string `json:"expression" description:"An arithmetic expression over numbers with +, -, *, /, parentheses and spaces, e.g. '(19.99 + 5) * 2'."`
}

// calculate evaluates the expression with Python's arithmetic and returns
// the value rounded to two decimals, written as Python writes a float
// ("256.0", "33.33").
func calculate(_ context.Context, in calculateIn) (string, error) {
	for _, r := range in.Expression {
		if !strings.ContainsRune("0123456789+-*/(). ", r) {
			return "", errors.New("Invalid characters in expression")
		}
	}
	v, err := pyEval(in.Expression)
	if err != nil {
		return "", err
	}
	f, err := v.toFloat()
	if err != nil {
		return "", err
	}
	return pyRepr(pyRound2(f)), nil
}

type transferIn struct {
	Summary string `json:"summary" description:"A short summary of the customer's issue for the human agent."`
}

func transferToHumanAgents(_ context.Context, _ transferIn) (string, error) {
	return "Transfer successful", nil
}
