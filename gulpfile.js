const { src, dest } = require('gulp');

/** Node icons and codex files sit beside their node; n8n reads them from dist/. */
function copyIcons() {
	return src(['nodes/**/*.{png,svg,json}', 'credentials/**/*.{png,svg}'], { base: '.', encoding: false }).pipe(
		dest('dist'),
	);
}

exports['build:icons'] = copyIcons;
