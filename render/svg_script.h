/* SPDX-License-Identifier: MIT */
/* The script embedded in exported SVGs: click a frame to zoom (the frames
 * below it span the width, those beside it hide), "Reset zoom", and
 * "Search" (comma-separated terms, each a regular expression, else fuzzy;
 * matches turn magenta and the share they hold is shown once, merging
 * nested matches). Frames carry data-x/data-w/data-d (x, width, depth of
 * the full view). */
#ifndef HEARTH_RENDER_SVG_SCRIPT_H
#define HEARTH_RENDER_SVG_SCRIPT_H

static const char rd_svg_script[] =
"var L=0,W=0,Z=null;\n"
"function fr(){return document.querySelectorAll('g.f');}\n"
"function num(g,k){return parseFloat(g.getAttribute('data-'+k));}\n"
"function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-n');"
"var c=Math.floor((w-6)/7);if(c<3){t.textContent='';return;}"
"t.textContent=n.length<=c?n:n.substring(0,c-1)+'\\u2026';}\n"
"function place(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');"
"r.setAttribute('x',x.toFixed(2));r.setAttribute('width',Math.max(w,0).toFixed(2));"
"t.setAttribute('x',(x+3).toFixed(2));fit(g,w);g.style.display='';}\n"
"function zoom(z){Z=z;var zx=num(z,'x'),zw=num(z,'w'),zd=num(z,'d'),s=W/zw;"
"fr().forEach(function(g){var x=num(g,'x'),w=num(g,'w'),d=num(g,'d');"
"if(d<zd){if(x<=zx+1e-6&&x+w>=zx+zw-1e-6){place(g,L,W);g.style.opacity=0.6;}"
"else g.style.display='none';}"
"else if(x>=zx-1e-6&&x+w<=zx+zw+1e-6){place(g,L+(x-zx)*s,w*s);g.style.opacity=1;}"
"else g.style.display='none';});"
"document.getElementById('unzoom').style.display='';}\n"
"function unzoom(){Z=null;fr().forEach(function(g){place(g,num(g,'x'),num(g,'w'));"
"g.style.opacity=1;});document.getElementById('unzoom').style.display='none';}\n"
"function fuzzy(t,s){t=t.toLowerCase();s=s.toLowerCase();var i=0;"
"for(var k=0;k<s.length&&i<t.length;k++)if(s[k]==t[i])i++;return i==t.length;}\n"
"function matcher(q){var ts=q.split(',').map(function(t){return t.trim();})"
".filter(function(t){return t.length>0;}),ns=[];"
"fr().forEach(function(g){ns.push(g.getAttribute('data-n'));});"
"return ts.map(function(t){var re=null;try{re=new RegExp(t,'i');}catch(e){}"
"if(re&&ns.some(function(n){return re.test(n);}))return function(n){return re.test(n);};"
"return function(n){return fuzzy(t,n);};});}\n"
"function search(q){var ms=matcher(q),iv=[],count=0;"
"fr().forEach(function(g){var r=g.querySelector('rect'),n=g.getAttribute('data-n');"
"if(!r.hasAttribute('data-fill'))r.setAttribute('data-fill',r.getAttribute('fill'));"
"var hit=ms.length>0&&ms.some(function(m){return m(n);});"
"r.setAttribute('fill',hit?'rgb(230,0,230)':r.getAttribute('data-fill'));"
"if(hit){count++;iv.push([num(g,'x'),num(g,'x')+num(g,'w')]);}});"
"iv.sort(function(a,b){return a[0]-b[0];});var cov=0,end=-1;"
"iv.forEach(function(v){if(v[0]>=end){cov+=v[1]-v[0];end=v[1];}"
"else if(v[1]>end){cov+=v[1]-end;end=v[1];}});"
"document.getElementById('matched').textContent=ms.length?count+(count==1?' match, ':' matches, ')+"
"(100*cov/W).toFixed(1)+'% of the total':'';}\n"
"function init(){var a=document.getElementById('all');L=num(a,'x');W=num(a,'w');"
"fr().forEach(function(g){g.addEventListener('click',function(){"
"if(Z===g)unzoom();else zoom(g);});});"
"document.getElementById('unzoom').addEventListener('click',unzoom);"
"document.getElementById('search').addEventListener('click',function(){"
"var q=prompt('Search functions (comma-separated; regex or fuzzy)','');"
"if(q!==null)search(q);});"
"document.addEventListener('keydown',function(e){if(e.key==='Escape')unzoom();"
"if((e.ctrlKey&&e.key==='f')||e.key==='/'){e.preventDefault();"
"var q=prompt('Search functions','');if(q!==null)search(q);}});}\n"
"window.addEventListener('load',init);\n";

#endif /* HEARTH_RENDER_SVG_SCRIPT_H */
