/** The project's eslint configuration refuses casts through unknown in src/ (tests excepted). */
import { ESLint } from 'eslint';

const eslint = new ESLint();

async function messages(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? ''}: ${m.message}`);
}

const REFUSED = 'no-restricted-syntax: no casts through unknown in src/: use a type guard or a proper declaration';

describe('no casts through unknown in src/', () => {
  it.each([
    ['as', 'export const n = (JSON.parse("1") as unknown as number) + 1;\n'],
    ['parenthesised as', 'export const n = ((JSON.parse("1") as unknown) as number) + 1;\n'],
    ['angle brackets', 'export const n = <number>(<unknown>JSON.parse("1")) + 1;\n'],
  ])('refuses a double cast written with %s', async (_form, code) => {
    expect(await messages(code, 'src/lib/cast-example.ts')).toEqual([REFUSED]);
  });

  it('allows a single cast, a cast to unknown, and double casts in tests', async () => {
    expect(await messages('export const n = JSON.parse("1") as number;\nexport const u = n as unknown;\n', 'src/lib/cast-example.ts')).toEqual([]);
    expect(await messages('export const n = JSON.parse("1") as unknown as number;\n', 'src/lib/cast-example.test.ts')).toEqual([]);
  });
});
