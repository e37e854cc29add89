// `interlock validate` with one phase wedged on purpose: its adapter never answers, while a
// listening socket keeps the event loop busy as a stuck socket would. Run from the built dist/.
//   node test/harness/wedged-validate.mjs <pod-network|rules|probe|nothing-left> validate ...
import { createServer } from 'node:net';
import { crashCli, finishCli, runCli } from '../../dist/cli/run-cli.js';

const [wedge, ...argv] = process.argv.slice(2);
const never = () => new Promise(() => undefined);
if (wedge !== 'nothing-left') createServer().listen(0, '127.0.0.1');
runCli(argv, {
  ...(wedge === 'pod-network' || wedge === 'nothing-left' ? { loadRtNetlink: never } : {}),
  ...(wedge === 'rules' ? { inspectRules: never } : {}),
  ...(wedge === 'probe' ? { proveInterception: never } : {}),
})
  .then(finishCli)
  .catch(crashCli);
