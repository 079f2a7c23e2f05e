import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'packages/protos/src/generated/**', 'coverage/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Configuration is parsed once per service; see CONVENTIONS.md.
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through the service config schema.' },
      ],
    },
  },
  {
    files: [
      '**/*.test.ts',
      'test/**',
      'packages/stack/**',
      'packages/test-support/**',
      'scripts/**',
      'bench/**',
      '**/src/main.ts',
      // Where every service's main.ts has its config parsed (runService's default runtime).
      'packages/common/src/runService.ts',
      '**/src/cli/**',
      '**/src/testing/**',
      'jest.config.js',
    ],
    rules: {
      'no-restricted-properties': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The proxy's destination policy is one module: its parts are reached only through it.
    files: ['services/proxy/src/**/*.ts'],
    ignores: ['services/proxy/src/domain/destinationPolicy.ts', 'services/proxy/src/domain/destinationPolicy/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/destinationPolicy/*'], message: 'Use the destination policy through domain/destinationPolicy.ts.' }] },
      ],
    },
  },
  {
    // The gateway's, the admin and the fields services' layers (CONVENTIONS.md): domain is plain rules, app the use cases over ports,
    // store hides Redis, transport parses and answers. Each imports only the layers below it; a
    // test may assemble several (store/detokenizationLog.test.ts writes through app's recorder).
    files: ['services/{gateway,admin,fields}/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+(app|transport|store)(/|$)', message: 'Domain code is plain rules: no app, transport or store imports.' },
          ],
        },
      ],
    },
  },
  {
    // The merchant-data package keeps the same order: its domain rules know nothing of its stores.
    files: ['packages/merchant-data/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./)+store(/|$)', message: 'Domain code is plain rules: no store imports.' }] },
      ],
    },
  },
  {
    files: ['services/{gateway,admin,fields}/src/app/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./)+transport(/|$)', message: 'Use cases do not import transport: put the port in app/ports.ts.' }] },
      ],
    },
  },
  {
    files: ['services/{gateway,admin,fields}/src/store/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./)+(app|transport)(/|$)', message: 'Stores do not import use cases or transport.' }] },
      ],
    },
  },
);
