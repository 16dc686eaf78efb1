(function(){
// matrix.html#<id> of the one-page matrix, forwarded to the page of the site that now holds that id.
var pages=JSON.parse(document.getElementById('pages').textContent),id=decodeURIComponent(location.hash.slice(1)),
 key='',anchor=id,to=pages[''];
if(id.indexOf('/')>0){key=id.split('/')[0];}
else if(id.indexOf('matrix-')===0){key=id.slice(7).split('-')[0];}
else if(id.indexOf('probes-')===0){key=id.slice(7);anchor='probes';}
else if(id==='comparison'||id==='twins'){to=pages['#comparison'];}
else{anchor='';}
if(key&&pages[key]){to=pages[key];}else if(key){anchor='';}
location.replace(to+(anchor?'#'+encodeURIComponent(anchor).replace(/%2F/g,'/').replace(/%2C/g,','):''));
})();
