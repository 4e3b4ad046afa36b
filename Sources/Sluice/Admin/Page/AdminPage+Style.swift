extension AdminPage {
    static let styleText = #"""
        :root { --fg: #1c2330; --muted: #6b7485; --line: #dfe3ea; --bg: #f6f7f9; --accent: #1d5c9b;
          --ok: #2e7d32; --warn: #b26a00; --bad: #c62828; --row: #ffffff; --pick: #e3eefa;
          font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); }
        header { display: flex; align-items: center; gap: 16px; padding: 8px 16px; background: #14263d; color: #fff; }
        header h1 { font-size: 16px; margin: 0; letter-spacing: .5px; }
        nav button { background: transparent; color: #cfd8e3; border: 0; padding: 6px 10px; border-radius: 4px; cursor: pointer; font: inherit; }
        nav button.active { background: #2b4a70; color: #fff; }
        .badge { display: inline-block; min-width: 18px; padding: 0 5px; border-radius: 9px; background: #38618f; font-size: 11px; text-align: center; }
        .state { margin-left: auto; font-size: 12px; color: #9fb3c8; }
        .state.live { color: #8fe39a; }
        button { font: inherit; padding: 4px 10px; border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; }
        button.quiet { background: transparent; }
        header button.quiet { color: #cfd8e3; border-color: #3a5576; }
        button.danger { color: var(--bad); border-color: #efc2c2; }
        input, select { font: inherit; padding: 3px 6px; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
        main { padding: 8px 16px; }
        .toolbar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px; }
        .muted { color: var(--muted); }
        .split { display: flex; gap: 12px; align-items: flex-start; }
        .list { flex: 1 1 55%; min-width: 0; max-height: calc(100vh - 120px); overflow: auto; background: var(--row); border: 1px solid var(--line); border-radius: 4px; }
        aside { flex: 1 1 45%; min-width: 0; max-height: calc(100vh - 120px); overflow: auto; background: #fff; border: 1px solid var(--line); border-radius: 4px; padding: 10px 12px; }
        table { width: 100%; border-collapse: collapse; }
        th { position: sticky; top: 0; background: #eef1f5; text-align: left; font-weight: 600; padding: 4px 6px; border-bottom: 1px solid var(--line); z-index: 1; }
        td { padding: 3px 6px; border-bottom: 1px solid #f0f2f5; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 520px; }
        tbody tr { cursor: pointer; }
        tbody tr:hover { background: #f3f7fc; }
        tbody tr.picked { background: var(--pick); }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        .s2 { color: var(--ok); } .s3 { color: var(--accent); } .s4 { color: var(--warn); } .s5, .s0 { color: var(--bad); }
        .tag { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 11px; background: #eef1f5; }
        .tag.hit { background: #dff3e2; color: #1b5e20; } .tag.stored { background: #e3eefa; color: #174a7c; }
        .tag.failed, .tag.rejected { background: #fde2e2; color: #8e1b1b; }
        h2 { font-size: 14px; margin: 14px 0 6px; }
        h3 { font-size: 13px; margin: 12px 0 4px; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
        dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
        .fields { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
        .fields td { white-space: normal; overflow-wrap: anywhere; max-width: none; cursor: auto; }
        .fields td:first-child { color: var(--muted); width: 30%; }
        pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; background: #f7f8fa; border: 1px solid var(--line); padding: 8px; overflow: auto; max-height: 480px; white-space: pre-wrap; overflow-wrap: anywhere; }
        .preview-image { max-width: 100%; max-height: 360px; border: 1px solid var(--line); }
        .actions { display: flex; gap: 6px; flex-wrap: wrap; margin: 6px 0; }
        .waterfall { position: relative; height: 18px; background: #f0f2f5; border-radius: 3px; margin: 2px 0; }
        .waterfall span { position: absolute; top: 0; bottom: 0; border-radius: 3px; min-width: 2px; }
        .phase-queued { background: #b0bec5; } .phase-dns { background: #4db6ac; } .phase-connect { background: #ffb74d; }
        .phase-tls { background: #ba68c8; } .phase-wait { background: #64b5f6; } .phase-receive { background: #1e88e5; }
        .timeline-row { display: grid; grid-template-columns: 90px 1fr 80px; gap: 8px; align-items: center; }
        progress { width: 160px; height: 12px; }
        .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr)); gap: 12px; }
        figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 4px; padding: 8px; }
        figcaption { font-weight: 600; margin-bottom: 4px; }
        figure canvas { display: block; width: 100%; height: 120px; }
        .legend i { display: inline-block; width: 10px; height: 3px; margin: 0 3px 2px 8px; vertical-align: middle; }
        .legend .c2 { background: #2e7d32; } .legend .c3 { background: #1d5c9b; } .legend .c4 { background: #b26a00; } .legend .c5 { background: #c62828; }
        #notice, #confirm, #token-form { margin: 8px 16px 0; padding: 8px 12px; border-radius: 4px; background: #fff6e0; border: 1px solid #f1d9a0; }
        #confirm { background: #fdecea; border-color: #f3c1bd; }
        .problem { border-left: 3px solid var(--bad); padding-left: 8px; }
        """#
}
