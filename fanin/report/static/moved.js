(function(){
// A page the site no longer has: the Markdown it published before (REPORT.md, CHECKLIST.md, probes/<key>.md),
// whose permalinks go on to the HTML page holding the same anchor; anything else stays on this page.
function moved(path){
 var m=/^(.*\/)probes\/([A-Za-z0-9_]+)\.md$/.exec(path);
 if(m)return m[1]+'probes/'+m[2]+'.html';
 m=/^(.*\/)(REPORT|CHECKLIST)\.md$/.exec(path);
 if(m)return m[1]+(m[2]==='REPORT'?'index.html':'checklist.html');
 return '';
}
window.faninMoved=moved;
var to=moved(location.pathname);
if(to)location.replace(to+location.hash);
})();
