import type { ConsoleApp } from '../app.ts'
import { replaceChildren } from '../dom.ts'
import { pageHeader } from '../ui.ts'

export async function renderCatalogue(app: ConsoleApp, _isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader('Catalogue'))
  app.finishRender('Catalogue')
}
