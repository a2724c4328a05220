/**
 * The only way the dashboard puts anything on the page: elements built with createElement, text as text nodes.
 * No innerHTML anywhere, so a model name like `<script>…` is shown as those characters and never parsed.
 */
export type Child = Node | string | number | null | undefined | false;

export interface Attrs {
  class?: string;
  id?: string;
  /** Only in-page links ("#/run/…"): anything else is dropped. */
  href?: string;
  title?: string;
  type?: string;
  value?: string;
  placeholder?: string;
  checked?: boolean;
  disabled?: boolean;
  colspan?: number;
  data?: Record<string, string>;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (ev: HTMLElementEventMap[K]) => void }>;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    if (attrs.class) el.className = attrs.class;
    if (attrs.id) el.id = attrs.id;
    if (attrs.href !== undefined && attrs.href.startsWith('#')) el.setAttribute('href', attrs.href);
    if (attrs.title !== undefined) el.title = attrs.title;
    if (attrs.type !== undefined) el.setAttribute('type', attrs.type);
    if (attrs.placeholder !== undefined) el.setAttribute('placeholder', attrs.placeholder);
    if (attrs.colspan !== undefined) el.setAttribute('colspan', String(attrs.colspan));
    if (attrs.value !== undefined) (el as HTMLInputElement).value = attrs.value;
    if (attrs.checked !== undefined) (el as HTMLInputElement).checked = attrs.checked;
    if (attrs.disabled !== undefined) (el as HTMLButtonElement).disabled = attrs.disabled;
    for (const [k, v] of Object.entries(attrs.data ?? {})) el.dataset[k] = v;
    for (const [type, fn] of Object.entries(attrs.on ?? {})) el.addEventListener(type, fn as EventListener);
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

export function table(headers: readonly string[], rows: readonly (readonly Child[])[], cls?: string): HTMLDivElement {
  return h(
    'div',
    { class: 'scroll' },
    h('table', cls ? { class: cls } : null, h('thead', null, h('tr', null, headers.map((x) => h('th', null, x)))), h('tbody', null, rows.map((r) => h('tr', null, r.map((c) => h('td', null, c)))))),
  );
}

export function badge(status: string): HTMLSpanElement {
  return h('span', { class: `badge ${status}`, data: { liveStatus: status } }, status);
}
