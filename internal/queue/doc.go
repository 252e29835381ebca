// Package queue runs an experiment's work on a NATS JetStream work queue:
// `weft run` with a queue publishes its rollout episodes, SFT tasks and
// GRPO tasks (pipeline.Unit) to a durable stream with work-queue retention,
// `weft worker` processes take them, run them with their own MegaMCP
// server and plugin processes (a Spec rebuilt from the run's config, its
// modules pinned to the coordinator's digests) and publish the results;
// the coordinator deduplicates results by unit and writes the run folder
// exactly as an in-process run does.
//
// # Streams
//
// WEFT_JOBS holds jobs on subjects "weft.jobs.<run id>" with work-queue
// retention and one durable pull consumer "workers" shared by every
// worker (explicit ack, Options.AckWait). WEFT_RESULTS holds results on
// "weft.results.<run id>" (limits retention, a day); each coordinator
// reads its run's subject with an ordered consumer. Both streams are file
// backed, so a NATS server restarted on the same store loses nothing.
//
// # Delivery
//
// Delivery is at least once. A worker acks a job only after the result's
// publish was acknowledged by the server (the result is durable); while a
// job runs it tells the server it is in progress every third of the ack
// wait, so a job whose worker dies (kill -9) is redelivered one ack wait
// after its last sign of life. Results carry a message id "<run>/<stage>/
// <key>" (the server drops a republished result within its duplicate
// window) and the Dispatcher passes a unit's result on once, whatever
// arrives twice. A worker that cannot get a module digest of the run
// refuses the job as an infrastructure failure (component module, kind
// no_such_module) and hands it back (NAK) for another worker; after
// Options.MaxRefusals refusals of one unit the coordinator records it as
// that failure.
//
// # Hostile input
//
// A message that does not decode as a job or a result (DecodeJob,
// DecodeResult: *MessageError) is reported and dropped (a job is
// terminated so it is not redelivered), and nothing else is lost: the
// queue goes on with the next message.
//
// Design: docs/design/033-work-queue.md.
package queue
