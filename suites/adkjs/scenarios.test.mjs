// The shared scenarios (scenarios/*.toml) in ADK for JavaScript, through its adapter and the protocol's messages.
// One probe per scenario, each the same line: the scenario is data, the adapter builds it, the harness grades
// (its title and claim are the scenario's: fanin.model.catalog.node_probe_info).
import { probe } from "../fanin_node.mjs";
import { observe } from "../scenario_kit.mjs";
import { adapter } from "./scenario_adapter.mjs";

probe({"id": "adkjs/scenario/same-key-two-writers"}, async function sameKeyTwoWriters(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/same-key-same-value"}, async function sameKeySameValue(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/read-await-write"}, async function readAwaitWrite(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/fan-in-order"}, async function fanInOrder(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/failing-branch"}, async function failingBranch(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/unequal-depth"}, async function unequalDepth(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/two-failing"}, async function twoFailing(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/unselected-branch"}, async function unselectedBranch(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/sibling-visibility"}, async function siblingVisibility(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/escalate"}, async function escalate(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/join-initial-shared"}, async function joinInitialShared(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/two-runs-one-thread"}, async function twoRunsOneThread(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/stalled-branch"}, async function stalledBranch(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/two-runs-together"}, async function twoRunsTogether(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/pause-resume"}, async function pauseResume(obs) {
  await observe(obs, adapter);
});

probe({"id": "adkjs/scenario/fail-resume"}, async function failResume(obs) {
  await observe(obs, adapter);
});
