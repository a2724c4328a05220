export { EventHeap } from '../../core/event-heap.js';
