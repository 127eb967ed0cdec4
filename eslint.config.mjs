// The lint rules: the shape of the code, line by line and function by function (issue 29,
// "Make the shape checkable"). `npm test` checks them (scripts/lint.mjs, beside the type check
// and the architecture rules); `npm run lint` checks them alone. The code breaks none of them:
// no violation is tolerated (issue 41 drove the count to zero and deleted the baseline, ESLint's
// bulk suppressions in eslint-suppressions.json), so any violation fails the run.
//
// Only the shape is checked here: no style a formatter would fix, no type-aware rules (they
// need the type checker, about six times the CPU time, on every `npm test`).
import stylistic from '@stylistic/eslint-plugin'
import typescriptParser from '@typescript-eslint/parser'

/** Columns of a line: code and comments alike. */
export const line_columns_max = 100
/** Lines of one function, blank lines and comments not counted. */
export const function_lines_max = 50
/** Independent paths through one function (ESLint's default). */
export const function_complexity_max = 20
/** Blocks nested in one function (ESLint's default). */
export const block_depth_max = 4

// How an SQL statement, and a line of one, begins (lower case, as this code writes SQL).
const sqlStatements = [
  'select', 'insert into', String.raw`update \w+(?: as \w+)? set`, 'delete from',
  String.raw`with \w+ as`, 'alter table', 'drop',
  'create (?:table|(?:unique )?index|type|extension|sequence|(?:or replace )?function)',
]
const sqlClauses = [
  ...sqlStatements, 'from', 'where', 'and', 'or', 'not', 'join', '(?:left|inner|cross) join',
  'on conflict', 'do update', 'do nothing', 'values', String.raw`set(?=\s+\w+\s*=)`, 'returning',
  'order by', 'group by', 'having', 'union', 'limit', 'offset', 'using', 'on',
]

// Lines the line-length rule lets through, whatever their length (one pattern, tested against
// each line; URLs and regular-expression literals have options of their own below):
const longLinesAllowed = [
  // An import or re-export: one line per module, its names where a search finds them.
  String.raw`^\s*(?:import|export)\b[^'"\x60]*\bfrom\s+['"][^'"]+['"]\s*$`,
  // SQL: a line of a multi-line statement (it starts with an SQL keyword, followed by no
  // assignment or punctuation as a TypeScript name would be), a kysely sql`…` template, or a
  // string that starts a statement. A clause is easier to read whole than wrapped at a column.
  String.raw`^\s*(?:${sqlClauses.join('|')})\s+(?![=:;,.)]|[-+*/%|&^]=)`,
  String.raw`\bsql(?:<[^>]*>)?\x60`,
  String.raw`[\x60'"](?:${sqlStatements.join('|')})\s`,
  // An operation row's prose (src/contract/operation.ts: `summary`, `description`): one
  // string, which the AsyncAPI document, the SDK and the CLI help print as written.
  String.raw`^\s*(?:summary|description):\s*['"\x60]`,
  // A test's title: the sentence the runner prints, found whole by a search of the output (also
  // when a helper labels it: `test(name('…'), …)`).
  String.raw`^\s*(?:test|it|describe)\(\s*(?:\w+\(\s*)?['"\x60]`,
].join('|')

export default [
  // test/fixtures/ break the rules on purpose (test/docs/lint.test.ts and architecture.test.ts);
  // packages/*/dist/ is built (npm run build:client), dist/ too (npm run build).
  {
    ignores: [
      'test/fixtures/**', '**/node_modules/**', 'packages/*/dist/**', 'dist/**', 'dist.*/**',
    ],
  },
  {
    files: ['**/*.ts', '**/*.mts'],
    languageOptions: { parser: typescriptParser },
  },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.js', '**/*.mjs'],
    plugins: { '@stylistic': stylistic },
    // A few files carry `eslint-disable` comments for rules not configured here.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      '@stylistic/max-len': ['error', {
        code: line_columns_max,
        tabWidth: 2,
        ignoreUrls: true,
        ignoreRegExpLiterals: true,
        ignorePattern: longLinesAllowed,
      }],
      'max-lines-per-function': ['error', {
        max: function_lines_max,
        skipBlankLines: true,
        skipComments: true,
      }],
      complexity: ['error', function_complexity_max],
      'max-depth': ['error', block_depth_max],
    },
  },
  // Wiring tables: files that are one list, read row by row. Each entry says why.
  {
    // A module's declaration (src/<folder>/<folder>-module.ts) holds its endpoint table: one
    // row per operation, each the operation and its handler's call, one line each so that the
    // table reads (and diffs) as a table.
    files: ['**/endpoint-table.ts', 'src/*/*-module.ts'],
    rules: { '@stylistic/max-len': 'off', 'max-lines-per-function': 'off' },
  },
  {
    // A migration's `up` is its statements in the order they run; split into functions, the
    // order would have to be read from several places.
    files: ['**/migrations.ts', '**/*-migration.ts', '**/*-migrations.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    // The metrics: one declaration per metric.
    files: ['**/bank-metrics.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
]
