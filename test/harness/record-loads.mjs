// `node --import ./test/harness/record-loads.mjs ...`: every module the process resolves, one URL
// a line, appended to the file INTERLOCK_LOAD_LOG names (what a command loads, measured).
import { register } from 'node:module';

register('./record-loads-hooks.mjs', import.meta.url);
