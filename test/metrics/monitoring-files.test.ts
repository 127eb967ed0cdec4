import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { useTestBank } from '../support/harness.ts'
import { parsePrometheusText, type Family } from './prometheus-text.ts'

// What deploy/ ships for monitoring: the Prometheus alert rules (deploy/prometheus), checked
// and unit-tested by promtool (Debian's `prometheus` package; .ci/run installs it), and the
// Grafana dashboard (deploy/grafana), which must parse and query only metrics the bank's
// /metrics serves. Without promtool the rules' part fails in CI (CI=true or
// BANK_TEST_REQUIRE_PROMTOOL=1) and elsewhere says it did not run.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const rulesDir = path.join(root, 'deploy/prometheus')
const dashboardFile = path.join(root, 'deploy/grafana/partner-bank-dashboard.json')
const promtoolRequired = process.env.CI === 'true'
  || process.env.BANK_TEST_REQUIRE_PROMTOOL === '1'
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0

const tb = useTestBank({ env: { BANK_METRICS_PORT: '0' } })
let families: Map<string, Family>

before(async () => {
  await tb.ready
  const response = await fetch(`http://127.0.0.1:${tb.bank.metricsPort}/metrics`)
  assert.equal(response.status, 200)
  families = parsePrometheusText(await response.text())
})

/** The series a query names: every `bank_…` identifier (label values are not identifiers). */
function metricNames(expr: string): string[] {
  const outsideLabels = expr.replace(/\{[^}]*\}/g, '{}')
  return [...outsideLabels.matchAll(/\bbank_[a-z0-9_]+\b/g)].map((m) => m[0])
}

/** Whether the bank serves the series: a family, or a histogram's `_bucket`/`_sum`/`_count`. */
function served(name: string): boolean {
  if (families.has(name)) return true
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1]
  return base !== undefined && families.get(base)?.type === 'histogram'
}

interface Panel {
  id: number
  type: string
  title: string
  targets?: Array<{ expr: string; refId: string }>
}

test('monitoring - the Grafana dashboard parses and queries only metrics the bank serves', () => {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { uid: string
    panels: Panel[] }
  assert.equal(dashboard.uid, 'partner-bank')
  const ids = dashboard.panels.map((p) => p.id)
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  const queried = new Set<string>()
  for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
    assert.ok(panel.targets && panel.targets.length > 0, `panel ${panel.title} queries something`)
    for (const target of panel.targets) {
      const names = metricNames(target.expr)
      assert.ok(names.length > 0, `panel ${panel.title} queries a bank metric: ${target.expr}`)
      for (const name of names) queried.add(name)
    }
  }
  const missing = [...queried].filter((name) => !served(name))
  assert.deepEqual(missing, [], 'every metric the dashboard queries is in /metrics')
  for (const name of ['bank_ready', 'bank_ledger_verify_ok', 'bank_pending_eft_count',
    'bank_review_queue', 'bank_webhook_failure_rate', 'bank_requests_total'])
    assert.ok(queried.has(name), `the dashboard shows ${name}`)
})

test('monitoring - the alert rules name only metrics the bank serves', () => {
  const rules = readFileSync(path.join(rulesDir, 'bank-alerts.yml'), 'utf8')
  const exprs = [...rules.matchAll(/^\s+expr: (?:>-\n)?([\s\S]*?)\n\s+(?:for|labels):/gm)]
    .map((m) => m[1]!)
  assert.ok(exprs.length >= 8, `the rules file has its alerts (${exprs.length} found)`)
  const missing = exprs.flatMap(metricNames).filter((name) => !served(name))
  assert.deepEqual(missing, [])
})

test('monitoring - promtool checks the alert rules and passes their unit tests', (t) => {
  if (!promtool) {
    const message = 'not run: promtool is not installed (Debian: apt-get install prometheus)'
    if (promtoolRequired) assert.fail(`${message}; CI=true or BANK_TEST_REQUIRE_PROMTOOL=1 ` +
      'requires it')
    t.diagnostic(message)
    return
  }
  const run = (args: string[]) => execFileSync('promtool', args, { cwd: rulesDir,
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  assert.match(run(['check', 'rules', 'bank-alerts.yml']), /SUCCESS: \d+ rules found/)
  assert.match(run(['test', 'rules', 'bank-alerts.test.yml']), /SUCCESS/)
})
