export type Values = Record<string, unknown>;
export interface GoRenderOptions {
  releaseName?: string;
  namespace?: string;
  /** API group/versions (and group/version/Kind) the target cluster serves. */
  apiVersions?: string[];
}
export declare const RENDERER_TOOLS: readonly string[];
export declare function mergeValues(base: Values, over: Values): Values;
export declare function loadValues(chartDir: string, overrides?: Values): Values;
export declare function rendererBinary(): string;
export declare function renderWithGo(chartDir: string, values: unknown, opts?: GoRenderOptions): Map<string, string>;
export declare function setValue(values: Values, assignment: string): Values;
