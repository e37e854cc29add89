#!/usr/bin/env node
import { crashCli, finishCli, runCli } from './run-cli.js';

runCli(process.argv.slice(2)).then(finishCli).catch(crashCli);
