/** `node --import ./test/helpers/register-ts.mjs child.ts`: installs the hooks in ts-hooks.mjs. */
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
