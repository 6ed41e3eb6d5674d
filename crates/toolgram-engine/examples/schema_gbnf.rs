//! Print the GBNF our schema compiler emits for one schema file (a maskbench entry's
//! `schema`, or a bare schema): `cargo run -p toolgram-engine --example schema_gbnf FILE`.

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: schema_gbnf FILE"))?;
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let schema = doc.get("schema").unwrap_or(&doc);
    let opts = toolgram_core::schema::SchemaOptions {
        lenient: true,
        ..Default::default()
    };
    let (g, notes) = toolgram_core::schema::to_grammar(schema, &opts)?;
    for n in notes {
        eprintln!("{} {} {:?}", n.pointer, n.keyword, n.kind);
    }
    let text = toolgram_core::grammar::gbnf::emit(&g);
    if let Err(e) = toolgram_core::grammar::gbnf::parse(&text) {
        eprintln!("our own GBNF reader refuses it: {e}");
    }
    print!("{text}");
    Ok(())
}
