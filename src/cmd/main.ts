#!/usr/bin/env node
/** The `kube-identity` program: one subcommand per component (src/cmd/program.ts). */
import 'reflect-metadata';
import { buildProgram } from './program.js';

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    process.stderr.write(`kube-identity: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
