// Measures a loaded page for the browser tests: horizontal overflow, the
// report's sections, timelines and quotes, and in-page links without a
// target. Evaluated as one expression; returns a plain object.
(() => {
  const vw = window.innerWidth;
  const slack = 0.5; // sub-pixel rounding
  const selector = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      let s = e.tagName.toLowerCase();
      if (e.id) {
        parts.unshift(s + '#' + CSS.escape(e.id));
        break;
      }
      if (e === document.body || e === document.documentElement) {
        parts.unshift(s);
        break;
      }
      for (const c of e.classList) s += '.' + CSS.escape(c);
      const p = e.parentElement;
      if (p) {
        const same = [...p.children].filter((c) => c.tagName === e.tagName);
        if (same.length > 1) s += ':nth-of-type(' + (same.indexOf(e) + 1) + ')';
      }
      parts.unshift(s);
    }
    return parts.join(' > ');
  };
  // A box that clips or scrolls its content horizontally (overflow-x other
  // than visible) and itself fits keeps what is inside it from widening the
  // page: a wide table in a scrolling box is not page overflow.
  const fitsInClip = (el) => {
    for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') {
        return a.getBoundingClientRect().right <= vw + slack;
      }
    }
    return false;
  };
  const offenders = [];
  const over = new Set();
  for (const el of document.body ? document.body.querySelectorAll('*') : []) {
    const r = el.getBoundingClientRect();
    if ((r.width === 0 && r.height === 0) || r.right <= vw + slack || fitsInClip(el)) continue;
    over.add(el);
    // Only the outermost offender of a subtree is listed.
    let inner = false;
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (over.has(a)) {
        inner = true;
        break;
      }
    }
    if (!inner) offenders.push(selector(el) + ' (right edge at ' + Math.round(r.right) + 'px)');
  }
  const broken = [];
  for (const a of document.querySelectorAll('a[href^="#"]')) {
    const href = a.getAttribute('href');
    let id = href.slice(1);
    try {
      id = decodeURIComponent(id);
    } catch (e) {
      broken.push(href + ' (not a valid fragment)');
      continue;
    }
    if (id !== '' && !document.getElementById(id)) broken.push(href);
  }
  // data: URIs in attributes (src, href, srcset...) and in style sheets:
  // Chromium does not report every one of them as a request.
  const data = new Set();
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (/^\s*data:/i.test(a.value)) data.add(a.value.trim());
    }
  }
  const cssData = /url\(\s*["']?(data:[^"')]*)/gi;
  for (const sheet of document.styleSheets) {
    let rules = [];
    try {
      rules = [...sheet.cssRules];
    } catch (e) {
      continue;
    }
    for (const r of rules) for (const m of r.cssText.matchAll(cssData)) data.add(m[1]);
  }
  const body = document.body;
  return {
    innerWidth: vw,
    scrollWidth: document.documentElement.scrollWidth,
    offenders: offenders,
    hasDataFindings: !!body && body.hasAttribute('data-findings'),
    dataFindings: body ? body.getAttribute('data-findings') || '' : '',
    findings: [...document.querySelectorAll('section.finding')].map((s) => ({
      id: s.id,
      fingerprint: s.getAttribute('data-fingerprint') || '',
    })),
    timelines: [...document.querySelectorAll('figure.timeline')].map((f) => {
      const sec = f.closest('section.finding');
      return {
        fingerprint: f.getAttribute('data-fingerprint') || '',
        section: sec ? sec.getAttribute('data-fingerprint') || '' : '',
        svgs: f.querySelectorAll('svg').length,
        bottom: Math.ceil(f.getBoundingClientRect().bottom + window.scrollY),
      };
    }),
    timelineSVGs: document.querySelectorAll('figure.timeline svg').length,
    quotes: [...document.querySelectorAll('li.quote')].map((q) => q.id),
    brokenLinks: broken,
    dataURIs: [...data],
    verdict: !!document.querySelector('section#verdict'),
    appendix: !!document.querySelector('section#appendix'),
  };
})()
