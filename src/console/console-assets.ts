import fs from 'node:fs'
import { createRequire } from 'node:module'

// The console's script and style files besides its own style sheet: uPlot (a chart library
// of about 50 KB, no dependencies, MIT; npm package `uplot`) served from node_modules under
// the console's own origin, since the Content-Security-Policy allows no other (no CDN), and
// the few lines that draw the overview's chart with it (no inline script: the figures come
// in the page as a data attribute). Read from disk once, on first use.

export interface Asset {
  type: string
  body: string | Buffer
}

const require = createRequire(import.meta.url)
const cache = new Map<string, Asset>()

/** Draws the overview's payments-per-minute chart, in SAST, when uPlot has loaded. */
const chart_script = `'use strict';
(function () {
  var el = document.getElementById('payments-chart');
  if (!el || !window.uPlot) return;
  var counts = JSON.parse(el.getAttribute('data-series'));
  var start = Number(el.getAttribute('data-start'));
  var times = counts.map(function (_, i) { return start + i * 60; });
  var sast = function (seconds) {
    return uPlot.tzDate(new Date(seconds * 1000), 'Africa/Johannesburg');
  };
  new uPlot({
    width: Math.max(320, Math.min(el.clientWidth || 800, 1100)),
    height: 240,
    tzDate: sast,
    scales: {
      x: { time: true },
      y: { range: function (u, min, max) { return [0, Math.max(1, max)]; } },
    },
    series: [{}, { label: 'Payments per minute', stroke: '#0b3d2e', width: 2,
      fill: 'rgba(11, 61, 46, 0.12)' }],
    legend: { show: false },
  }, [times, counts], el);
})();
`

function load(path: string): Asset | undefined {
  switch (path) {
    case '/assets/uplot.js':
      return {
        type: 'text/javascript; charset=utf-8',
        body: fs.readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')),
      }
    case '/assets/uplot.css':
      return {
        type: 'text/css; charset=utf-8',
        body: fs.readFileSync(require.resolve('uplot/dist/uPlot.min.css')),
      }
    case '/console-chart.js':
      return { type: 'text/javascript; charset=utf-8', body: chart_script }
    default:
      return undefined
  }
}

/** The asset served at `path`, or undefined. */
export function asset(path: string): Asset | undefined {
  const known = cache.get(path)
  if (known) return known
  const found = load(path)
  if (found) cache.set(path, found)
  return found
}
