// Package attribute will attribute failed episodes to the policy, the
// environment, the task or the verifier, and route each failure to the
// revision loop that repairs the faulty component. It lands with the
// verification and attribution work; nothing is implemented here yet.
package attribute
