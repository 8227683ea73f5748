// The package ships no typings: the shape its parser returns, as far as the tests read it.
declare module 'parse-prometheus-text-format' {
	export interface MetricFamily {
		name: string;
		help: string;
		type: string;
		metrics: Array<{ labels?: Record<string, string>; value?: string }>;
	}
	export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
