#!/usr/bin/env -S node --max-old-space-size=192 --max-semi-space-size=2
// The heap cap of scripts/node-runtime-flags.json (a test keeps the two equal).
import { crashCli, finishCli, runCli } from './run-cli.js';

runCli(process.argv.slice(2)).then(finishCli).catch(crashCli);
