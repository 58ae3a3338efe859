//! Headless Chromium, to render a report and check its layout (Debian's
//! chromium; without it a test fails naming the package).

use super::tool;
use std::path::Path;
use std::process::Command;

/// Headless Chromium as the environment notes start it (no background
/// networking: this machine's network is closed).
pub fn chromium(args: &[&str], profile: &Path) -> std::process::Output {
    let bin = tool("chromium", "chromium");
    Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs")
}

/// Run in the rendered report: every chart's title and axis labels (with
/// units), legends clear of each other and of the plot, no text past a
/// chart's edge, one colour per device and format in every chart, a line
/// per thread count in the thread/queue charts, and a legend click hiding
/// its series. Writes its findings as JSON into `#layout-check`.
const LAYOUT_CHECK: &str = r#"
(function(){
var bad=[], colours={}, owners={}, charts=document.querySelectorAll('svg.chart');
function box(e){var b=e.getBBox();return {x0:b.x,y0:b.y,x1:b.x+b.width,y1:b.y+b.height};}
function meets(a,b){return a.x0<b.x1-0.5&&b.x0<a.x1-0.5&&a.y0<b.y1-0.5&&b.y0<a.y1-0.5;}
function device(name){return name.replace(/ \((simulated|measured|published[^)]*|vendor rating[^)]*)\)$/,'');}
charts.forEach(function(svg){
  var id=svg.id;
  var title=svg.querySelector('text.title'); if(!title||!title.textContent.trim()) bad.push(id+': no title');
  var y=svg.querySelector('.axis-label.y');
  if(!y||!/\(.+\)|IOPS/.test(y.textContent)) bad.push(id+': y axis label without a unit: '+(y&&y.textContent));
  if(svg.getAttribute('data-kind')=='line'){var x=svg.querySelector('.axis-label.x'); if(!x||!x.textContent.trim()) bad.push(id+': no x axis label');}
  var plot=box(svg.querySelector('rect.plot')), legends=[].slice.call(svg.querySelectorAll('g.legend')).map(function(g){return [g,box(g)];});
  legends.forEach(function(a,i){
    if(meets(a[1],plot)) bad.push(id+': legend "'+a[0].textContent+'" overlaps the plot');
    legends.slice(i+1).forEach(function(b){if(meets(a[1],b[1])) bad.push(id+': legend entries overlap: '+a[0].textContent+' / '+b[0].textContent);});
    var sw=a[0].querySelector('line,rect'), c=sw.getAttribute('stroke'), n=a[0].textContent;
    if(/threads|percentile|mean|fit|per round|KiB|\d\/\d|T\/\d/.test(n)) return;
    if(colours[n]&&colours[n]!=c) bad.push('"'+n+'" is '+colours[n]+' in one chart and '+c+' in '+id);
    colours[n]=c; var d=device(n);
    if(owners[c]&&owners[c]!=d) bad.push(c+' stands for '+owners[c]+' and for '+d+' ('+id+')');
    owners[c]=d;
  });
  var edge=svg.getBoundingClientRect();
  svg.querySelectorAll('text').forEach(function(t){var b=t.getBoundingClientRect();
    if(t.textContent&&(b.left<edge.left-0.5||b.right>edge.right+0.5||b.top<edge.top-0.5||b.bottom>edge.bottom+0.5)) bad.push(id+': text cut at the edge: '+t.textContent);});
  var ends=[].slice.call(svg.querySelectorAll('text.end-label')).map(box);
  ends.forEach(function(a,i){
    if((a.y0+a.y1)/2<plot.y0-1||(a.y0+a.y1)/2>plot.y1+1) bad.push(id+': an end label beside no part of the plot');
    ends.slice(i+1).forEach(function(b){if(meets(a,b)) bad.push(id+': end labels overlap');});
  });
  if(/-matrix-/.test(id)){
    var lines=svg.querySelectorAll('g.series'), labels=svg.querySelectorAll('text.end-label');
    lines.forEach(function(g){if(!/(^| )(2|4|8|16)-threads( |$)/.test(g.getAttribute('data-keys'))) bad.push(id+': a line without its thread count');});
    if(lines.length!=labels.length) bad.push(id+': '+lines.length+' lines, '+labels.length+' end labels');
    window.matrixLines=(window.matrixLines||0)+lines.length;
  }
});
var first=charts[0], g=first.querySelector('g.legend'), k=g.getAttribute('data-key');
g.dispatchEvent(new MouseEvent('click',{bubbles:true}));
var hidden=[].slice.call(first.querySelectorAll('[data-keys]')).filter(function(e){return e.getAttribute('data-keys').split(' ').indexOf(k)>=0;});
if(!hidden.length||hidden.some(function(e){return e.style.display!='none';})) bad.push('a legend click does not hide its series');
var pre=document.createElement('pre'); pre.id='layout-check';
pre.textContent=JSON.stringify({charts:charts.length,devices:Object.keys(owners).length,matrix_lines:window.matrixLines||0,bad:bad});
document.body.appendChild(pre);
})();
"#;

/// Renders the report with `LAYOUT_CHECK` appended and asserts its findings.
pub fn layout_check(out: &Path, prof: &Path, devices: usize, matrix_lines: usize) {
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let page = out.join("layout-check.html");
    std::fs::write(&page, html.replace("</body>", &format!("<script>{LAYOUT_CHECK}</script></body>"))).unwrap();
    let o = chromium(&["--dump-dom", &format!("file://{}", page.display())], prof);
    let dom = String::from_utf8_lossy(&o.stdout);
    let found = dom.split("<pre id=\"layout-check\">").nth(1).and_then(|s| s.split("</pre>").next()).expect("the layout check ran");
    let v: serde_json::Value = serde_json::from_str(&found.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")).unwrap();
    assert_eq!(v["bad"].as_array().unwrap().len(), 0, "report layout: {:#}", v["bad"]);
    assert_eq!(v["devices"], devices, "each device and format with its own colour: {v}");
    assert_eq!(v["matrix_lines"], matrix_lines, "a line per thread count: {v}");
}
