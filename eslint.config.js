import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import layers from './hack/eslint-folder-loops.js';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'charts/', '.kube-identity/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      complexity: ['warn', 15],
      'max-params': ['warn', 5],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Only src/cmd reads the process environment or exits.
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read process.env only in src/cmd' },
        { object: 'process', property: 'exit', message: 'exit only in src/cmd' },
        { object: 'process', property: 'argv', message: 'read argv only in src/cmd' },
      ],
    },
  },
  {
    // A folder of src/ may depend on another only one way: lower layers never import higher ones.
    files: ['src/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/no-folder-loop': 'error' },
  },
  {
    // A cast through unknown (`x as unknown as T`) tells the compiler nothing about x: narrow it with
    // a type guard, or type where it comes from. Tests may still reach into private members this way.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: ':matches(TSAsExpression, TSTypeAssertion) > :matches(TSAsExpression, TSTypeAssertion) > TSUnknownKeyword.typeAnnotation',
          message: 'no casts through unknown in src/: use a type guard or a proper declaration',
        },
      ],
    },
  },
  {
    files: ['src/controller/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/apiserver/**'] }] },
  },
  {
    files: ['src/apiserver/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/controller/**'] }] },
  },
  {
    files: ['src/cmd/**/*.ts', 'test/**/*.ts', 'test/**/*.mjs', 'bench/**/*.ts', '**/*.test.ts', '*.js', 'scripts/**', 'hack/*.mjs'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // A table-driven test's callback takes one parameter per column of its it.each table.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { 'max-params': 'off' },
  },
);
