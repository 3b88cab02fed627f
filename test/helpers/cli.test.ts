/** The CLI child helpers leave nothing running when the child does not come up. */
import { startCliChild } from './cli.js';
import { trackHandles } from './handles.js';

it('startCliChild rejects when the child exits before it is ready, and leaves no timer behind', async () => {
  const handles = trackHandles();
  try {
    await expect(startCliChild(['no-such-command'], () => undefined)).rejects.toThrow(/no-such-command exited 1/);
    expect(await handles.settle(500)).toEqual([]);
  } finally {
    handles.stop();
  }
});
