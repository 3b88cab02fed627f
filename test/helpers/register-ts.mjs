/**
 * `node --import ./test/helpers/register-ts.mjs child.ts`: installs the hooks in ts-hooks.mjs on the
 * loading thread itself (each worker thread runs this too), not on a loader thread that every import
 * would wait for: a third less CPU per `up` start.
 */
import { registerHooks } from 'node:module';
import { load, resolve } from './ts-hooks.mjs';

registerHooks({ resolve, load });
