/**
 * The official Kubernetes Python client (Debian's python3-kubernetes, 22.6) against the embedded API server, used
 * as a user would: load_kube_config, the typed APIs, the dynamic client, watch streams. The checks themselves are
 * Python assertions in python_client_checks.py; this suite runs them and shows their output when one fails.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeWithTools, findPython } from '../helpers/tools.js';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python_client_checks.py');

interface Run {
  code: number;
  output: string;
}

/** Runs the checks without blocking the event loop, which serves the requests they make. */
function runChecks(python: string, kubeconfig: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(python, [script, kubeconfig], { timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describeWithTools(['python3:kubernetes'])('the official Python client', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Bookmarks every half second so the bookmark check sees one quickly.
    server = await startTestServer({ storage: 'sqlite', bookmarkIntervalMs: 500 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists, reads, writes, patches, watches and deletes as a Python user would', async () => {
    const run = await runChecks(findPython('kubernetes') ?? 'python3', server.kubeconfigPath);
    const failures = run.output.split('\n').filter((line) => line.startsWith('FAIL '));
    // The whole output is in the message, so a failing check shows its traceback.
    expect({ code: run.code, failures, output: run.code === 0 ? '' : run.output }).toEqual({ code: 0, failures: [], output: '' });
    expect(run.output).toContain('all checks passed');
  }, 150_000);
});
