// Command bfcl is the multi-turn domain of the Berkeley Function Calling
// Leaderboard v4 (github.com/ShishirPatil/gorilla, bfcl_eval, Apache-2.0)
// as a weft tool module: the eight API classes of its multi-turn tasks
// (GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI,
// TradingBot, TravelAPI, VehicleControlAPI), 128 tools named and
// documented as BFCL's function docs (func_docs/, embedded), reproducing
// the reference classes' behaviour (bfcl_eval/eval_checker/
// multi_turn_eval/func_source_code) call for call.
//
// State: one row per class in bfcl_class (schema.sql): config is the
// task's initial_config for the class, state NULL until the first call
// runs the class's _load_scenario on config, then the attribute names; each
// attribute is a bfcl_attr row (JSON text, key order kept, private "_"
// attributes included: the random generator's position, the file system's
// side record). GorillaFileSystem's tree is the session's workspace files,
// its entries' order bfcl_fs_entry rows (fsfiles.go). A class without a
// row starts from its default state. Each call loads the instance, runs
// the method on it and writes back the attributes (and files) it changed;
// the export hook (weft.export) gives {class: {attribute: value}}, the
// public attributes as BFCL's state checker compares them, the file tree
// read from the files.
//
// Python semantics carried over: int/float arithmetic, round(), float
// repr in messages, str.splitlines, dict insertion order, the
// int-keyed dicts of TwitterAPI and TradingBot, random.Random (an MT19937
// port with randint/uniform, pyrand.go) seeded by each configuration's
// random_seed, TradingBot's fixed clock (2024-09-01 10:30, UTC) and
// TravelAPI's "today" pinned to 2024-09-01. Error answers (a dict with an
// "error" key, or a one-element list of one) and raised exceptions are
// tool errors; the manifest says errors_keep_state, as BFCL keeps what a
// method changed before answering an error. Decision record:
// docs/design/029-bfcl.md; user docs: docs/bfcl.md.
//
// Build (a WASI reactor):
//
//	weft module build ./examples/modules/bfcl
package main
