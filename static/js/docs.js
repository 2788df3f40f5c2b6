// docs.js starts Swagger UI on the API docs page (/api/docs). It lives in a
// file of its own, not in an inline <script>, so the page works under a
// Content-Security-Policy with script-src 'self'. The page must load
// /static/vendor/swagger-ui-bundle.js first and have <div id="swagger-ui">.
(function () {
  "use strict";

  function start() {
    if (typeof window.SwaggerUIBundle !== "function") {
      return; // swagger-ui-bundle.js failed to load; the page shows its fallback text
    }
    window.ui = window.SwaggerUIBundle({
      url: "/api/openapi.json",
      dom_id: "#swagger-ui",
      presets: [window.SwaggerUIBundle.presets.apis],
      layout: "BaseLayout", // StandaloneLayout needs swagger-ui-standalone-preset.js, not vendored
      deepLinking: true,
      displayOperationId: true,
      showExtensions: true, // shows x-sunset and x-stability
      showCommonExtensions: true,
      docExpansion: "list",
      defaultModelsExpandDepth: 1,
      filter: true,
      tryItOutEnabled: false,
      persistAuthorization: false,
      queryConfigEnabled: false, // ignore ?url= and other config in the query string
      validatorUrl: null // no calls to validator.swagger.io
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
