/**
 * A tiny element builder: text always goes in as text nodes (never as HTML), so nothing the API
 * returns can inject markup. Attributes whose name starts with "on" become event listeners.
 */

export type Child = Node | string | number | null | undefined | false | Child[]
type Listener = (event: Event) => void
export type Attrs = Record<string, string | number | boolean | null | undefined | Listener>

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value)
    } else if (value === true) {
      element.setAttribute(name, '')
    } else {
      element.setAttribute(name, String(value))
    }
  }
  append(element, children)
  return element
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(parent, child)
    else parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child)
  }
}

/** Empties a node and fills it again. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, children)
}

let counter = 0
/** A document-unique id, for label/for and aria-describedby pairs. */
export function uid(prefix: string): string {
  counter += 1
  return `${prefix}-${counter}`
}

/** A labelled form control with an optional hint, wired together for assistive technology. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  options: { hint?: string; className?: string } = {},
): HTMLDivElement {
  if (!control.id) control.id = uid('field')
  const hint = options.hint ? h('p', { class: 'hint', id: uid('hint') }, options.hint) : null
  if (hint) control.setAttribute('aria-describedby', [control.getAttribute('aria-describedby'), hint.id].filter(Boolean).join(' '))
  return h('div', { class: options.className ? `field ${options.className}` : 'field' }, h('label', { for: control.id }, label), hint, control)
}

/** A checkbox with its label after it. */
export function checkboxField(label: string, control: HTMLInputElement): HTMLDivElement {
  if (!control.id) control.id = uid('field')
  return h('div', { class: 'field checkbox' }, control, h('label', { for: control.id }, label))
}
