/**
 * hack/render-chart (Go's text/template + sprig + Helm's functions), built once per source version
 * into the temp directory and run per render. Building in GOPATH mode uses the Debian Go packages
 * hack/ensure-tools.sh installs (golang-go, sprig, sigs.k8s.io/yaml).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SOURCE_DIR = path.join(process.cwd(), 'hack', 'render-chart');
const GO_ENV = { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode' };

export const RENDERER_TOOLS = ['go'] as const;

let built: string | undefined;

/** The renderer binary, built unless this source version's binary is already in the temp directory. */
export function rendererBinary(): string {
  if (built) return built;
  const source = readFileSync(path.join(SOURCE_DIR, 'main.go'));
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const bin = path.join(os.tmpdir(), `kube-identity-render-chart-${hash}`);
  if (!existsSync(bin)) {
    // Build beside the target and rename, so parallel jest workers never run a half-written file.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-render-chart-build-'));
    try {
      execFileSync('go', ['build', '-o', path.join(dir, 'render-chart'), '.'], { cwd: SOURCE_DIR, env: GO_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
      renameSync(path.join(dir, 'render-chart'), bin);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  built = bin;
  return bin;
}

export interface GoRenderOptions {
  releaseName?: string;
  namespace?: string;
  apiVersions?: string[];
}

/** Renders every template of `chartDir` with `values` (already merged and validated); file name -> text. */
export function renderWithGo(chartDir: string, values: unknown, opts: GoRenderOptions = {}): Map<string, string> {
  const args = ['--chart', chartDir, '--namespace', opts.namespace ?? 'default'];
  if (opts.releaseName) args.push('--release', opts.releaseName);
  if (opts.apiVersions?.length) args.push('--api-versions', opts.apiVersions.join(','));
  let out: string;
  try {
    out = execFileSync(rendererBinary(), args, { input: JSON.stringify(values), encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr;
    throw new Error(stderr ? stderr.trim() : String(err));
  }
  return new Map(Object.entries(JSON.parse(out) as Record<string, string>));
}
