// Renders /openapi.json with Swagger UI. Served from the gateway: the
// validator badge (an outside service) is off, so the page loads nothing
// from anywhere but this origin.
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayOperationId: true,
  filter: true,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
