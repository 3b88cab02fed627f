#!/usr/bin/env node
/** The `kube-identity` program: one subcommand per component. */
import 'reflect-metadata';
import { Command } from 'commander';
import { registerApiserverCommand } from './apiserver.js';
import { registerControllerCommand } from './controller.js';
import { registerDemoCommand } from './demo.js';
import { registerUpCommand } from './up.js';

const program = new Command();
program.name('kube-identity').description('Hands out identities in a Kubernetes cluster').showHelpAfterError();
registerUpCommand(program);
registerApiserverCommand(program);
registerControllerCommand(program);
registerDemoCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`kube-identity: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
