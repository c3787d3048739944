// The API reference page's only script (no inline script: the page's CSP allows scripts from this origin only).
// Swagger UI's BaseLayout: no top bar, so no framework logo and no box to explore other documents.
window.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('swagger-ui')
  window.SwaggerUIBundle({
    domNode: root,
    // The versioned contract itself, the same document `npm run openapi` commits.
    url: root.getAttribute('data-openapi-url'),
    layout: 'BaseLayout',
    presets: [window.SwaggerUIBundle.presets.apis],
    deepLinking: true,
    // Tags start folded: expanded, Swagger UI stops rendering after the first tags once the document passes about 130 operations.
    docExpansion: 'none',
    defaultModelsExpandDepth: 0,
    filter: true,
    displayRequestDuration: true,
    // "Try it out" calls this origin only (connect-src 'self'); never a third-party validator.
    supportedSubmitMethods: ['get', 'post', 'put', 'patch', 'delete'],
    validatorUrl: null,
    persistAuthorization: false,
  })
})
