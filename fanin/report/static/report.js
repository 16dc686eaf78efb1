(function(){
function label(t,i){var h=t.querySelector('thead th[data-col="'+i+'"]');return h?h.firstChild.textContent:String(i);}
document.querySelectorAll('form.pick').forEach(function(f){
 f.hidden=false;
 var t=document.getElementById(f.dataset.table),out=f.querySelector('output');
 function show(){t.classList.remove('picked','picked-two');
  t.querySelectorAll('tr,th,td').forEach(function(e){e.hidden=false;});
  t.querySelectorAll('[data-span]').forEach(function(e){e.colSpan=+e.dataset.span;e.removeAttribute('data-span');});
  t.querySelectorAll('.pick-col').forEach(function(h){h.classList.remove('pick-col');});out.textContent='';}
 function keep(e,n){if(!e.hasAttribute('data-span'))e.dataset.span=e.colSpan;e.colSpan=n;}
 f.addEventListener('reset',show);
 f.addEventListener('submit',function(e){
  e.preventDefault();show();
  var a=+f.elements.a.value,b=+f.elements.b.value,lo=Math.min(a,b),hi=Math.max(a,b),
   between=f.elements.between.checked,pages=JSON.parse(f.dataset.pages||'{}'),key=lo+'-'+hi;
  if(a===b){out.textContent='pick two different versions';return;}
  if(pages[key]&&f.elements.page.checked){location.href=pages[key];return;}
  function shown(i){return between?lo<=i&&i<=hi:i===lo||i===hi;}
  var cols=0,n=0,topic=null,seen=0;
  t.querySelectorAll('thead th[data-col]').forEach(function(h){var on=shown(+h.dataset.col);h.hidden=!on;if(on)cols++;});
  t.querySelectorAll('tbody tr').forEach(function(r){
   if(r.classList.contains('topic')){if(topic)topic.hidden=!seen;topic=r;seen=0;keep(r.querySelector('th'),cols+1);return;}
   var kept=[],kinds={};
   r.querySelectorAll('td').forEach(function(c){var k=0;
    for(var i=+c.dataset.from;i<=+c.dataset.to;i++){if(shown(i))k++;}
    if(k){kept.push([c,k]);kinds[c.dataset.same]=1;}else c.hidden=true;});
   if(Object.keys(kinds).length<2){r.hidden=true;return;}
   kept.forEach(function(x){keep(x[0],x[1]);});n++;seen++;
  });
  if(topic)topic.hidden=!seen;
  t.classList.add('picked');if(!between)t.classList.add('picked-two');
  t.querySelectorAll('thead th[data-col="'+a+'"],thead th[data-col="'+b+'"]').forEach(function(h){h.classList.add('pick-col');});
  out.textContent=between?n+' rows change from '+label(t,lo)+' to '+label(t,hi)+' ('+cols+' versions shown)'
   :n+' rows differ between '+label(t,lo)+' and '+label(t,hi);
 });
});
})();
