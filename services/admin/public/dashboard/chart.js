/* global document */
// Small SVG charts for the Requests page, drawn by our own code: no library, no CDN, and nothing
// the page's Content-Security-Policy forbids (no inline style: colours come from dashboard.css
// classes). Each chart is one <svg role="img"> with a title and a text description for screen readers.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 900;
const HEIGHT = 150;
const PAD = { left: 52, right: 12, top: 12, bottom: 24 };

/** Coordinates to a tenth of a unit: shorter markup, and no long digit runs (12.345678901234) in the page. */
function node(tag, attrs = {}, text) {
  const n = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs))
    n.setAttribute(name, String(typeof value === 'number' ? Math.round(value * 10) / 10 : value));
  if (text !== undefined) n.textContent = text;
  return n;
}

/** A round upper bound for the y axis: 1, 2 or 5 times a power of ten. */
function niceMax(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/**
 * One chart: `series` are { name, className, values (numbers or null), kind: 'bars' | 'line' } over
 * the same minutes (`times`, ISO strings); `format` writes an axis value.
 */
export function drawChart({ id, title, description, times, series, format }) {
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter((v) => v !== null))));
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const step = innerW / Math.max(1, times.length);
  const x = (i) => PAD.left + i * step + step / 2;
  const y = (v) => PAD.top + innerH - (v / max) * innerH;

  const svg = node('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'chart',
    role: 'img',
    'aria-labelledby': `${id}-title ${id}-desc`,
    id,
  });
  svg.append(node('title', { id: `${id}-title` }, title), node('desc', { id: `${id}-desc` }, description));

  // Grid lines and y labels at 0, half and the top.
  for (const fraction of [0, 0.5, 1]) {
    const value = max * fraction;
    svg.append(
      node('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value), class: 'chart-grid' }),
      node('text', { x: PAD.left - 6, y: y(value) + 4, class: 'chart-label', 'text-anchor': 'end' }, format(value)),
    );
  }
  // x labels: start, middle, end.
  for (const i of [0, Math.floor(times.length / 2), times.length - 1]) {
    if (times[i] === undefined) continue;
    const anchor = i === 0 ? 'start' : i === times.length - 1 ? 'end' : 'middle';
    svg.append(
      node('text', { x: x(i), y: HEIGHT - 6, class: 'chart-label', 'text-anchor': anchor }, timeFormat.format(new Date(times[i]))),
    );
  }

  for (const s of series) {
    if (s.kind === 'bars') {
      const group = node('g', { class: s.className, 'data-series': s.name });
      s.values.forEach((v, i) => {
        if (!v) return;
        const top = y(v);
        group.append(
          node('rect', { x: x(i) - Math.max(1, step * 0.4), y: top, width: Math.max(2, step * 0.8), height: PAD.top + innerH - top }),
        );
      });
      svg.append(group);
      continue;
    }
    // A line, broken where there is no value (a minute without PSP calls); single points as dots.
    let d = '';
    let open = false;
    const dots = node('g', { class: s.className, 'data-series': s.name });
    s.values.forEach((v, i) => {
      if (v === null || v === undefined) {
        open = false;
        return;
      }
      d += `${open ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      open = true;
      dots.append(node('circle', { cx: x(i), cy: y(v), r: 2.5 }));
    });
    svg.append(node('path', { d: d || 'M0,0', class: `${s.className} chart-line`, 'data-series': s.name }), dots);
  }
  return svg;
}

/** A legend for the series of a chart: coloured keys with their names. */
export function legend(series) {
  const list = document.createElement('ul');
  list.className = 'chart-legend';
  for (const s of series) {
    const item = document.createElement('li');
    const key = document.createElement('span');
    key.className = `chart-key ${s.className}`;
    key.setAttribute('aria-hidden', 'true');
    item.append(key, document.createTextNode(s.name));
    list.append(item);
  }
  return list;
}
