/// The built-in landing page (Mustache). A project replaces it with `templates/_landing/page.mustache` or
/// `landingPages.template`; `{{name}}` is escaped for HTML, `{{{name}}}` is not (only `pass`, `qr` and `css`,
/// which passforge has made safe, are meant for it). The values are listed in the README ("Landing pages").
enum LandingPageTemplate {
    static let builtIn = """
        <!DOCTYPE html>
        <html lang="{{lang}}"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex, nofollow">
        <meta name="referrer" content="no-referrer">
        <meta http-equiv="Content-Security-Policy" content="{{csp}}">
        <link rel="icon" href="data:,">
        <title>{{title}}</title>
        <meta property="og:type" content="website">
        <meta property="og:title" content="{{og.title}}">
        {{#og.description}}<meta property="og:description" content="{{og.description}}">{{/og.description}}
        {{#og.image}}<meta property="og:image" content="{{og.image}}">{{/og.image}}
        {{#og.url}}<meta property="og:url" content="{{og.url}}">{{/og.url}}
        {{#alternates}}<link rel="alternate" hreflang="{{code}}" href="{{href}}">
        {{/alternates}}
        <style>{{{css}}}</style>
        </head><body class="landing">
        <main>
        <h1>{{title}}</h1>
        {{#hasLanguages}}<nav class="languages" aria-label="{{text.languages}}">{{#languages}}{{#current}}<b>{{code}}</b>{{/current}}{{^current}}<a href="{{href}}" hreflang="{{code}}" rel="noreferrer">{{code}}</a>{{/current}} {{/languages}}</nav>{{/hasLanguages}}
        <div class="item">{{{pass}}}</div>
        {{#unavailable}}<p class="unavailable" role="status">{{unavailable}}</p>{{/unavailable}}
        {{^unavailable}}
        <div class="add">
        {{#badge}}<a class="badge" href="{{href}}" rel="noreferrer"><img src="{{src}}" alt="{{alt}}" height="48"></a>{{/badge}}
        {{^badge}}<a class="text-link" href="{{link.href}}" rel="noreferrer">{{link.text}}</a>{{/badge}}
        </div>
        <p class="instructions">{{text.instructions}}</p>
        {{#qr}}<section class="handoff"><p>{{text.scan}}</p>{{{qr}}}</section>{{/qr}}
        {{/unavailable}}
        </main>
        </body></html>

        """

    /// The page's own styles: the preview's pass card, plus the page around it. A phone (a coarse pointer)
    /// does not show the QR code, which is for a computer's screen; no script decides it.
    static let css = """
        body.landing { background: #f2f2f7; }
        main { max-width: 420px; margin: 0 auto; padding: 16px; }
        main h1 { font-size: 20px; margin: 8px 0 12px; }
        .languages { font-size: 14px; margin-bottom: 12px; }
        .item .sides { padding: 0; }
        .item .pass, .item .order { width: auto; max-width: 390px; }
        .add { margin: 20px 0 8px; text-align: center; }
        .badge img { height: 48px; padding: 5px; }
        .text-link { display: inline-block; padding: 12px 18px; border-radius: 10px; background: #000; color: #fff; font-weight: 600;
          text-decoration: none; }
        .instructions { color: #444; font-size: 14px; text-align: center; }
        .unavailable { margin: 20px 0; padding: 12px; border-radius: 10px; background: #fff3cd; font-weight: 600; text-align: center; }
        .handoff { text-align: center; margin-top: 16px; }
        .handoff .barcode { margin: 8px auto; }
        @media (pointer: coarse) { .handoff { display: none; } }
        """
}
